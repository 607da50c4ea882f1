"""Each world's language is declared once, beside it (`servicerobot.envs.language`): its generator speaks from the
declaration and the rule interpreter is built from it, so the one agent reads every world's own sentences."""

from __future__ import annotations

import inspect
import re
from dataclasses import replace

import numpy as np
import pytest

from servicerobot.envs.household import language as household_language
from servicerobot.envs.language import Language, LanguageError, Phrasing, fill
from servicerobot.language import rule_interpreter
from servicerobot.language.interpreter import Context
from servicerobot.language.rule_interpreter import NotUnderstood, RuleInterpreter
from servicerobot.memory.triplets import triplet_to_atom
from servicerobot.pddl import Atom
from servicerobot.scenes.household import household_domain


def _regex(template: str) -> re.Pattern:
    return re.compile("^" + ".+".join(re.escape(p) for p in re.split(r"\{\w+\}", template)) + "$")


def _context(world) -> Context:
    prior = world.prior()
    return Context(world.domain, prior["entities"], frozenset(triplet_to_atom(t) for t in prior["facts"]))


# ---------------------------------------------------------------------------------------------- declarations
def test_a_template_field_the_language_does_not_declare_is_refused_with_its_name():
    with pytest.raises(LanguageError, match=r"'fetch' templates use fields \['thing'\]"):
        Language("toy", tasks={"fetch": Phrasing(("Bring the {thing}.",), goal="(held {thing})")},
                 fields={"item": "item"})
    with pytest.raises(LanguageError, match=r"meaning uses fields \['place'\]"):
        Language("toy", tasks={"fetch": Phrasing(("Bring the {item}.",), goal="(on {item} {place})")},
                 fields={"item": "item"})
    with pytest.raises(LanguageError, match="names 'gadget'"):
        Language("toy", tasks={}, fields={"item": "gadget"})


def test_fill_repeats_each_conjunct_of_a_list_field_once_per_name():
    pattern = "(and (inside {items} {fridge}) (cold {items}))"
    assert fill(pattern, {"items": ["a", "b"], "fridge": "f"}) == \
        "(and (inside a f) (inside b f) (cold a) (cold b))"
    assert fill("(safe {item})", {"item": "box_1"}) == "(safe box_1)"
    with pytest.raises(LanguageError, match=r"needs fields \['item'\]"):
        fill("(safe {item})", {})


def test_the_interpreter_reads_whatever_language_it_is_built_from():
    """A toy world's declaration alone makes its sentences readable: nothing about it is written elsewhere."""
    toy = Language("toy", tasks={"shine": Phrasing(("Polish the {item} in the {room}, please.",),
                                                   goal="(not (dirty {item}))"),
                                 "chill": Phrasing(("Keep {items} cold.",), goal="(and (cold {items}))")},
                   events={"spill": Phrasing(("I spilled juice on the {item}.",), add=("(dirty {item})",))},
                   fields={"item": "item", "items": "items", "room": "room"})
    entities = {"robot": {"type": "robot", "noun": "robot"}, "kitchen": {"type": "room", "noun": "kitchen"},
                "hall": {"type": "room", "noun": "hall"},
                "mug_1": {"type": "dish", "noun": "mug", "colour": "red"},
                "mug_2": {"type": "dish", "noun": "mug", "colour": "red"},
                "plate_1": {"type": "dish", "noun": "plate", "colour": "blue"},
                "table_1": {"type": "surface", "noun": "table", "room": "kitchen"},
                "table_2": {"type": "surface", "noun": "table", "room": "hall"}}
    facts = frozenset({Atom("on", ("mug_1", "table_1")), Atom("on", ("mug_2", "table_2")), Atom("cold", ("mug_1",))})
    ctx = Context(household_domain(), entities, facts)
    rules = RuleInterpreter(toy)
    # two red mugs: the room the sentence names decides which one
    assert rules.interpret_task("Polish the red mug in the hall, please.", "Ana", ctx) == "(not (dirty mug_2))"
    assert rules.interpret_task("Polish the red mug in the kitchen, please.", "Ana", ctx) == "(not (dirty mug_1))"
    # a list of phrases: each its own choice, the one the goal is news for (mug_1 is cold already)
    assert rules.interpret_task("Keep the red mug and the blue plate cold.", "Ana", ctx) == \
        "(and (cold mug_2) (cold plate_1))"
    assert rules.classify("I spilled juice on the red mug.", "Ana", ctx) == "update"
    delta = rules.interpret_update("I spilled juice on the red mug.", "Ana", ctx)
    assert len(delta.add) == 1 and next(iter(delta.add)).predicate == "dirty" and not delta.remove
    with pytest.raises(NotUnderstood, match="no toy task template"):
        rules.interpret_task("Could you put the red mug in the cabinet?", "Ana", ctx)


def test_the_household_language_is_the_household_tables_not_a_copy():
    lang = household_language.LANGUAGE
    for kind, templates in household_language.TASK_TEMPLATES.items():
        assert lang.tasks[kind].templates is templates
    for kind, templates in household_language.EVENT_TEMPLATES.items():
        assert lang.events[kind].templates is templates
    for kind, meaning in household_language.TASK_MEANINGS.items():
        assert (lang.tasks[kind].goal, lang.tasks[kind].implied) == (meaning.goal, meaning.implied)
    for kind, meaning in household_language.EVENT_MEANINGS.items():
        assert (lang.events[kind].add, lang.events[kind].remove) == (meaning.add, meaning.remove)
    assert set(household_language.TASK_MEANINGS) == set(lang.tasks)
    assert set(household_language.EVENT_MEANINGS) == set(lang.events)
    assert RuleInterpreter().language is lang


# ---------------------------------------------------------------------------------------------- household meanings
_HOME = {"robot": {"type": "robot", "noun": "robot"}, "kitchen": {"type": "room", "noun": "kitchen"},
         "ana_bedroom": {"type": "room", "noun": "Ana's bedroom"}, "ana": {"type": "person", "noun": "Ana"},
         "table_1": {"type": "surface", "noun": "table", "room": "kitchen"},
         "fridge_1": {"type": "fridge", "noun": "fridge", "room": "kitchen"},
         "light_1": {"type": "light", "noun": "light", "room": "kitchen"},
         "light_2": {"type": "light", "noun": "light", "room": "ana_bedroom", "owner": "Ana"},
         "bed_1": {"type": "bed", "noun": "bed", "room": "ana_bedroom", "owner": "Ana"},
         "shelf_1": {"type": "shelf", "noun": "bookshelf", "room": "ana_bedroom", "owner": "Ana"},
         "mug_1": {"type": "dish", "noun": "mug", "colour": "red"},
         "book_1": {"type": "book", "noun": "book", "colour": "blue"},
         "book_2": {"type": "book", "noun": "notebook", "colour": "green"},
         "book_3": {"type": "book", "noun": "magazine", "colour": "pink"}}
_HOME_FACTS = frozenset({Atom("on", ("mug_1", "table_1")), Atom("on", ("book_1", "table_1")),
                         Atom("on", ("book_2", "bed_1")), Atom("inside", ("book_3", "fridge_1")),
                         Atom("chills", ("fridge_1",)), Atom("in-room", ("ana", "kitchen"))})


def _home(facts=_HOME_FACTS) -> Context:
    return Context(household_domain(), _HOME, frozenset(facts))


def test_every_household_kind_means_what_its_declaration_says_and_the_interpreter_holds_none():
    lang = household_language.LANGUAGE
    assert all(p.declared for p in (*lang.tasks.values(), *lang.events.values()))
    source = inspect.getsource(rule_interpreter)
    for kind in (*lang.tasks, *lang.events):
        assert f'"{kind}"' not in source, kind
    for predicate in ("dirty", "held-by", "light-on", "chills", "cold", "made", "broken", "discarded"):
        assert f'"{predicate}"' not in source, predicate


def test_a_household_meaning_changed_or_added_in_the_declaration_is_read_with_no_code_change():
    lang = household_language.LANGUAGE
    changed = replace(lang, tasks={"fetch_for_me": Phrasing(("Fetch {item} for me.",), goal="(held-by {item} {person})",
                                                            implied={"person": "{speaker}"}), **lang.tasks},
                      events={**lang.events, "clean": replace(lang.events["clean"], remove=(), add=("(broken {item})",)),
                              "nap": Phrasing(("I napped in {room}.",), remove=("(made {bed})",),
                                              implied={"bed": "the bed in {room}"})})
    rules, ctx = RuleInterpreter(changed), _home(_HOME_FACTS | {Atom("made", ("bed_1",))})
    assert rules.interpret_task("Fetch the red mug for me.", "Ana", ctx) == "(held-by mug_1 ana)"
    assert rules.interpret_update("I washed the red mug.", "Ana", ctx).add == {Atom("broken", ("mug_1",))}
    assert rules.interpret_update("I napped in Ana's bedroom.", "Ana", ctx).remove == {Atom("made", ("bed_1",))}
    assert RuleInterpreter().interpret_update("I washed the red mug.", "Ana", ctx).add == set()  # as declared


def test_a_place_is_on_or_inside_as_the_domain_types_the_fixture():
    rules, ctx = RuleInterpreter(), _home()
    assert rules.interpret_task("Could you put the red mug in the fridge?", "Ana", ctx) == "(inside mug_1 fridge_1)"
    assert rules.interpret_task("Could you put the blue book on Ana's bookshelf?", "Ana", ctx) == \
        "(on book_1 shelf_1)"
    with pytest.raises(NotUnderstood, match=r"none of \['on', 'inside'\] takes \['mug_1', 'light_1'\]"):
        rules.interpret_task("Could you put the red mug on the light in the kitchen?", "Ana", ctx)
    # a conditional meaning: into a fridge memory believes chills, the mug is cold too
    delta = rules.interpret_update("I put the red mug in the fridge.", "Ana", ctx)
    assert delta.add == {Atom("inside", ("mug_1", "fridge_1")), Atom("cold", ("mug_1",))}
    assert delta.remove == {Atom("on", ("mug_1", "table_1"))}
    delta = rules.interpret_update("I put the red mug in the fridge.", "Ana", _home(_HOME_FACTS - {Atom("chills", (
        "fridge_1",))}))
    assert delta.add == {Atom("inside", ("mug_1", "fridge_1"))}


def test_implied_fields_are_the_speaker_the_thing_of_a_room_and_every_thing_of_a_room():
    rules, ctx = RuleInterpreter(), _home()
    assert rules.interpret_task("Could you bring me the red mug?", "Ana", ctx) == "(held-by mug_1 ana)"
    with pytest.raises(NotUnderstood, match="who is 'Zed'"):
        rules.interpret_task("Could you bring me the red mug?", "Zed", ctx)
    assert rules.interpret_task("Please make the bed in Ana's bedroom.", "Ana", ctx) == "(made bed_1)"
    assert rules.interpret_update("I turned on the light in Ana's bedroom.", "Ana", ctx).add == \
        {Atom("light-on", ("light_2",))}
    assert rules.interpret_task("Make sure the red mug is cold again.", "Ana", ctx) == \
        "(and (inside mug_1 fridge_1) (cold mug_1))"
    # every book memory places on or in a fixture of the room (on the table, in the fridge), not the bedroom's
    assert rules.interpret_task("Please tidy up: put all the books in the kitchen on Ana's bookshelf.", "Ana",
                                ctx) == "(and (on book_1 shelf_1) (on book_3 shelf_1))"
    assert rules.interpret_update("I'm going to Ana's bedroom.", "Ana", ctx) == \
        rules.interpret_update("Ana went to Ana's bedroom.", "Ana", ctx)
    with pytest.raises(NotUnderstood, match="no book is known to be in ana_bedroom"):
        rules.interpret_task("Please tidy up: put all the books in Ana's bedroom on Ana's bookshelf.", "Ana",
                             _home({Atom("chills", ("fridge_1",))}))


def test_a_languages_joiners_and_about_come_from_its_declaration():
    lang = household_language.LANGUAGE
    rng = np.random.default_rng(0)
    first, second = "I washed the red mug.", "oh wait."
    glues = {household_language.join_utterances(first, second, rng)[len(first) + 1:-len(second)] for _ in range(40)}
    assert glues == set(lang.joiners)  # the generator glues with the declared words, every one of them
    ctx = _home()
    two = "I washed the red mug. Also, the light in the kitchen is on now."
    assert RuleInterpreter().interpret_update(two, "Ana", ctx).add == {Atom("light-on", ("light_1",))}
    with pytest.raises(NotUnderstood):  # without the declared joiners it is one sentence no template reads
        RuleInterpreter(replace(lang, joiners=())).interpret_update(two, "Ana", ctx)
    nodes = RuleInterpreter().query_graph("Please wash the dishes.", "Ana", ctx).nodes
    assert ("dirty dishes", "dish") in {(n.text, n.type) for n in nodes}
    crumbs = replace(lang, tasks={**lang.tasks, "wash_dishes": replace(lang.tasks["wash_dishes"],
                                                                       about={"crumbs": "food"})})
    nodes = RuleInterpreter(crumbs).query_graph("Please wash the dishes.", "Ana", ctx).nodes
    assert ("crumbs", "food") in {(n.text, n.type) for n in nodes} and "dirty dishes" not in {n.text for n in nodes}


def test_an_inconsistent_meaning_or_implied_field_is_refused_with_what_to_fix():
    fields = {"item": "item", "room": "room", "bed": "fixture", "person": "person"}
    with pytest.raises(LanguageError, match=r"meaning uses fields \['person'\] that its template 'Fetch \{item\}.'"):
        Language("toy", tasks={"fetch": Phrasing(("Fetch {item}.",), goal="(held-by {item} {person})")},
                 fields=fields)
    with pytest.raises(LanguageError, match="an implied field is"):
        Language("toy", tasks={"nap": Phrasing(("Nap.",), goal="(made {bed})", implied={"bed": "a bed"})},
                 fields=fields)
    with pytest.raises(LanguageError, match=r"implies 'bed' as 'the bed in \{room\}' but does not say \['room'\]"):
        Language("toy", tasks={"nap": Phrasing(("Nap.",), goal="(made {bed})",
                                               implied={"bed": "the bed in {room}"})}, fields=fields)
    with pytest.raises(LanguageError, match="'in {item}', which is not a room field"):
        Language("toy", tasks={"nap": Phrasing(("Nap on {item}.",), goal="(made {bed})",
                                               implied={"bed": "the bed in {item}"})}, fields=fields)
    lang = Language("toy", tasks={"nap": Phrasing(("Nap on {item}.",))}, fields=fields)  # templates only
    with pytest.raises(NotUnderstood, match="declares no meaning for the task kind 'nap'"):
        RuleInterpreter(lang).interpret_task("Nap on the red mug.", "Ana", _home())


# ---------------------------------------------------------------------------------------------- PyBullet
@pytest.fixture(scope="module")
def pybullet_world():
    pytest.importorskip("pybullet")
    from servicerobot.envs.pybullet.world import PyBulletWorld

    world = PyBulletWorld("default")
    yield world
    world.close()


def test_the_pybullet_generator_and_interpreter_use_one_declaration(pybullet_world):
    from servicerobot.envs.pybullet import tasks

    world = pybullet_world
    assert world.language is tasks.LANGUAGE
    rules = RuleInterpreter.for_world(world)
    assert rules.language is tasks.LANGUAGE
    declared = {t for p in tasks.LANGUAGE.tasks.values() for t in p.templates}
    assert {t.text for t in rules._tasks} == declared
    assert tasks.TASK_KINDS == tuple(tasks.LANGUAGE.tasks)
    # no second table of sentences in the generator's module
    assert not [name for name, value in vars(tasks).items() if isinstance(value, dict)
                and any(isinstance(v, tuple) and v and isinstance(v[0], str) and "{" in v[0] for v in value.values())]


def test_every_pybullet_task_sentence_is_read_to_the_goal_the_generator_meant(pybullet_world):
    from servicerobot.envs.pybullet.tasks import LANGUAGE

    world = pybullet_world
    rules = RuleInterpreter.for_world(world)
    patterns = {kind: [_regex(t) for t in p.templates] for kind, p in LANGUAGE.tasks.items()}
    read = 0
    used: set[str] = set()
    for seed in range(12):
        world.reset(np.random.default_rng(seed))
        ctx = _context(world)
        for kind in LANGUAGE.tasks:
            for _ in range(6):
                task = world.tasks.sample(kind)
                if task is None:
                    continue
                assert any(p.match(task.text) for p in patterns[kind]), task.text
                used.update(t for t in LANGUAGE.tasks[kind].templates if _regex(t).match(task.text))
                assert rules.classify(task.text, task.speaker, ctx) == "task", task.text
                assert rules.interpret_task(task.text, task.speaker, ctx) == task.goal, task.text
                read += 1
    assert read >= 100
    assert used == {t for p in LANGUAGE.tasks.values() for t in p.templates}  # every phrasing was heard


def test_a_pybullet_move_report_is_read_to_the_move_that_happened(pybullet_world):
    world = pybullet_world
    rules = RuleInterpreter.for_world(world)
    heard = 0
    for seed in range(6):
        world.reset(np.random.default_rng(seed))
        ctx = _context(world)  # memory as at the start: where things were before the move
        event = world.tasks.background(frozenset())
        if event is None:
            continue
        assert rules.classify(event.utterance, event.actor, ctx) == "update"
        delta = rules.interpret_update(event.utterance, event.actor, ctx)
        moved = {a for a in event.add if a.predicate == "item-on"}
        assert set(delta.add) == moved, event.utterance
        assert set(delta.remove) == {a for a in event.delete if a.predicate == "item-on"}, event.utterance
        heard += 1
    assert heard >= 4


def test_the_agent_from_a_pybullet_env_reads_its_tasks():
    """The issue's sentence, which the household-only interpreter refused, through `ServiceAgent.from_env`."""
    pytest.importorskip("pybullet")
    from servicerobot.agent import ServiceAgent
    from servicerobot.envs.core import ServiceRobotEnv

    env = ServiceRobotEnv("pybullet")
    try:
        _, info = env.reset(seed=0)
        agent = ServiceAgent.from_env(env)
        if isinstance(agent.interpreter, RuleInterpreter):  # no model configured in the environment
            assert agent.interpreter.language is env.world.language
        ctx = _context(env.world)
        rules = RuleInterpreter.for_world(env.world)
        text = "There is a suspicious green box in the dining room. Could you check it?"
        box = next(n for n, e in ctx.entities.items() if e.get("noun") == "green box")
        assert rules.interpret_task(text, "Ana", ctx) == f"(safe {box})"
        assert rules.interpret_task(info["task"], "Ana", ctx) == info["oracle"]["goal"]
    finally:
        env.close()


def test_the_pybullet_percept_leaves_memory_with_every_true_fact(pybullet_world):
    """Closed world over observed entities: a fact whose object is observed (the room's places, the places that
    reach a seen table) must be in the percept, else memory drops true facts and plans become unsolvable."""
    from servicerobot.memory.graph import KnowledgeGraph
    from servicerobot.memory.updates import apply_percept

    world = pybullet_world
    for seed in range(3):
        world.reset(np.random.default_rng(seed))
        memory = KnowledgeGraph.from_prior(world.domain, world.prior(), keep_history=False)
        apply_percept(memory, world.percept(), 0)
        assert memory.facts == world.state.atoms


def test_items_that_can_forbid_an_action_are_kept_in_the_agents_problems():
    """tamp-world's `move` needs that no unsafe box guards the place: a problem without the boxes would give
    plans that fail on memory. The household domain has no such action, so its idle items may go."""
    from servicerobot.agent import _item_guards
    from servicerobot.envs.pybullet.world import tamp_world_domain

    assert _item_guards(household_domain()) == frozenset()
    assert {"guards", "suspicious", "safe"} <= _item_guards(tamp_world_domain())


def test_a_pybullet_goal_is_scored_on_the_worlds_own_problem(pybullet_world):
    """The experiment runner scores the agent's goal against the true one; on PyBullet that asked for the
    household scene (AttributeError) until `relevant_problem` took the world's own problem."""
    from servicerobot.envs.evaluation import GoalScorer

    world = pybullet_world
    world.reset(np.random.default_rng(0))
    task = world.tasks.sample("pick_place")
    scorer = GoalScorer(world, check_solvable=False)
    assert scorer.score(task.goal, task.goal)["correct"] is True
    other = next(f.name for f in world.layout.furniture if f.name not in task.goal)
    wrong = task.goal.rsplit(" ", 1)[0] + f" {other})"
    assert scorer.score(wrong, task.goal)["correct"] is False


# ---------------------------------------------------------------------------------------------- Context Matters
def test_context_matters_renders_and_reads_its_tasks_from_one_declaration():
    from servicerobot.envs.context_matters import goals

    fill_in = {"room": "living room", "n": "three", "people": "people", "objects": "cup", "target": "coffee table"}
    for domain, phrasing in goals.LANGUAGE.tasks.items():
        assert goals.render_task(domain, "living_room", 3, "cup", "coffee_table") == \
            phrasing.templates[0].format(**fill_in)
        for template in phrasing.templates:  # every declared sentence is read back, room or not
            read = goals.parse_task(template.format(**fill_in))
            assert read.domain == domain, template
            assert read.room == ("living_room" if "{room}" in template else None), template
            if "{n}" in template:
                assert read.requirements[-1 if domain == "office_setup" else 0].count == 3 or \
                    read.requirements[1].count == 3, template
    assert {"dining_setup", "general"} <= {d for d, p in goals.LANGUAGE.tasks.items() if len(p.templates) == 2}
    source = inspect.getsource(goals.render_task) + inspect.getsource(goals.parse_task).split("raise")[0]
    assert not re.search(r"set the table|laundry:|bring |assemble", source)  # no second copy of a sentence


def test_a_template_reads_back_its_fields_literally():
    from servicerobot.envs.language import template_regex

    pattern = template_regex("bring {n} {objects}s to the {target}. ({n}?)", {"n": r"\d+", "objects": "[a-z ]+?",
                                                                           "target": "[a-z ]+?"})
    assert pattern.match("bring 2 cups to the desk. (2?)").groupdict() == {"n": "2", "objects": "cup",
                                                                         "target": "desk"}
    assert not pattern.match("bring 2 cups to the desk. (3?)")  # a field said twice says the same
    assert not pattern.match("bring 2 cups to the desk! (2?)")


def test_a_task_names_a_destination_the_words_can_tell_apart():
    """A real building's dining room may hold two dining tables: "the dining table in the dining room" names
    neither, so a pick-and-place task takes another destination where the house has one."""
    from types import SimpleNamespace

    from servicerobot.envs.household.language import Describer

    def fixture(noun, room, owner=None):
        return SimpleNamespace(noun=noun, room=room, pos=(0.0, 0.0), attributes={"owner": owner} if owner else {})

    room = lambda noun: SimpleNamespace(noun=noun, room=None, pos=None, attributes={})  # noqa: E731
    scene = SimpleNamespace(entities={"dining_room": room("dining room"), "kitchen": room("kitchen"),
                                      "bedroom": room("bedroom"),
                                      "table_1": fixture("dining table", "dining_room"),
                                      "table_2": fixture("dining table", "dining_room"),
                                      "table_3": fixture("dining table", "kitchen"),
                                      "bed_1": fixture("bed", "bedroom", owner="Ana"),
                                      "bed_2": fixture("bed", "bedroom", owner="Hiro")})
    d = Describer(scene)
    assert not d.names_one("table_1") and not d.names_one("table_2")
    assert d.names_one("table_3") and d.fixture("table_3") == "the dining table in the kitchen"
    assert d.names_one("bed_1") and d.fixture("bed_1", "ana") == "my bed"  # owners tell them apart
