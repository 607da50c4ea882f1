"""Each world's language is declared once, beside it (`servicerobot.envs.language`): its generator speaks from the
declaration and the rule interpreter is built from it, so the one agent reads every world's own sentences."""

from __future__ import annotations

import re

import numpy as np
import pytest

from servicerobot.envs.household import language as household_language
from servicerobot.envs.language import Language, LanguageError, Phrasing, fill
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
    assert RuleInterpreter().language is lang


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
