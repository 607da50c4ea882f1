"""LLMInterpreter on the household domain, with a real OpenAIModel talking to a local stub server."""

from __future__ import annotations

import pytest

pytest.importorskip("openai")


from servicerobot.errors import PDDLParseError
from servicerobot.language import (
    Cassette,
    Context,
    Interpreter,
    LanguageModelError,
    LLMInterpreter,
    OpenAIModel,
    QueryEdge,
    QueryNode,
    format_facts,
)
from servicerobot.language.llm_interpreter import GOAL_SCHEMA, UPDATE_SCHEMA
from servicerobot.memory.triplets import Delta, DeltaFormatError
from servicerobot.pddl import Atom
from servicerobot.pddl import Interpreter as PDDLInterpreter
from servicerobot.scenes.household import household_domain

ENTITIES = {
    "kitchen": {"type": "room", "noun": "kitchen"},
    "kira_bedroom": {"type": "room", "noun": "Kira's bedroom"},
    "kira": {"type": "person", "noun": "Kira", "name": "Kira"},
    "robot": {"type": "robot", "noun": "robot"},
    "mug_1": {"type": "dish", "noun": "mug", "colour": "red", "owner": "Kira"},
    "mug_2": {"type": "dish", "noun": "mug", "colour": "blue"},
    "counter_1": {"type": "surface", "noun": "counter"},
    "kitchen_sink_1": {"type": "sink", "noun": "kitchen sink"},
    "light_2": {"type": "light", "noun": "light"},
}
FACTS = frozenset({Atom("on", ("mug_1", "counter_1")), Atom("in-room", ("kira", "kitchen")),
                   Atom("light-on", ("light_2",)), Atom("dirty", ("mug_1",))})
UPDATE_TEXT = "I put my red mug in the sink and switched the light off."
GOOD_UPDATE = {"REMOVE": [{"subject": "mug_1", "relation": "on", "object": "counter_1"},
                          {"subject": "light_2", "relation": "light-on", "object": "true"}],
               "ADD": [{"subject": "mug_1", "relation": "inside", "object": "kitchen_sink_1"}]}
EXPECTED_DELTA = Delta.of(remove=[Atom("on", ("mug_1", "counter_1")), Atom("light-on", ("light_2",))],
                          add=[Atom("inside", ("mug_1", "kitchen_sink_1"))])


@pytest.fixture
def context():
    return Context(household_domain(), ENTITIES, FACTS)


def interpreter_for(stub, **kwargs) -> LLMInterpreter:
    return LLMInterpreter(OpenAIModel("test-model", base_url=stub.url, timeout=5.0, max_retries=0), **kwargs)


def test_it_is_an_interpreter(stub):
    interpreter = interpreter_for(stub)
    assert isinstance(interpreter, Interpreter)
    assert interpreter.name == "llm:openai:test-model"


def test_update_answer_becomes_the_delta(stub, context):
    interpreter = interpreter_for(stub)
    stub.answer(GOOD_UPDATE, prompt_tokens=900, completion_tokens=60)
    assert interpreter.interpret_update(UPDATE_TEXT, "Kira", context) == EXPECTED_DELTA
    request = stub.requests[0]
    assert request["response_format"]["json_schema"]["schema"] == UPDATE_SCHEMA
    system, user = (m["content"] for m in request["messages"])
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert '- inside(item, container): triplet [item, "inside", container]' in system
    assert '- dirty(item): triplet [item, "dirty", "true"]' in system
    assert "strictly necessary" in system and "sink: container" in system
    assert "mug_1 (dish): Kira's red mug" in user and "mug_2 (dish): blue mug" in user
    assert user.index("kira (person)") < user.index("mug_1 (dish)")  # catalogue sorted by name
    facts = ["kira -> in-room -> kitchen", "light_2 -> light-on -> true", "mug_1 -> dirty -> true",
             "mug_1 -> on -> counter_1"]
    assert "\n".join(facts) in user  # sorted, one per line
    assert f'Kira says: "{UPDATE_TEXT}"' in user
    assert (interpreter.usage.prompt_tokens, interpreter.usage.completion_tokens, interpreter.usage.calls) \
        == (900, 60, 1)


def test_malformed_answer_then_correction_with_feedback(stub, context):
    """L3M+P style: the error of the first answer goes back to the model, which corrects itself."""
    interpreter = interpreter_for(stub)
    stub.answer("The mug is now in the sink.", completion_tokens=7)
    with pytest.raises(DeltaFormatError, match="not valid JSON") as first:
        interpreter.interpret_update(UPDATE_TEXT, "Kira", context)
    stub.answer({"REMOVE": [["mug_1", "on", "counter_1"]], "ADD": [["mug_1", "inside", "false"]]})
    with pytest.raises(DeltaFormatError, match="false fact") as second:
        interpreter.interpret_update(UPDATE_TEXT, "Kira", context, feedback=[str(first.value)])
    stub.answer(GOOD_UPDATE)
    feedback = [str(first.value), str(second.value)]
    assert interpreter.interpret_update(UPDATE_TEXT, "Kira", context, feedback=feedback) == EXPECTED_DELTA

    assert len(stub.requests[0]["messages"]) == 2
    last = stub.requests[2]["messages"]
    assert last[:2] == stub.requests[0]["messages"]  # the same conversation, then the problems
    assert last[2]["role"] == "user" and "rejected" in last[2]["content"]
    assert f"- {first.value}" in last[2]["content"] and f"- {second.value}" in last[2]["content"]
    assert interpreter.usage.calls == 3  # the malformed answers' tokens count too
    assert interpreter.usage.completion_tokens == 7 + 5 + 5


def test_goal_extraction(stub, context):
    interpreter = interpreter_for(stub)
    stub.answer({"goal": "```pddl\n(:goal (and (inside mug_1 kitchen_sink_1) (not (dirty mug_1))))\n```"})
    goal = interpreter.interpret_task("Please wash my red mug in the sink.", "Kira", context)
    assert goal == "(and (inside mug_1 kitchen_sink_1) (not (dirty mug_1)))"
    PDDLInterpreter(context.domain, {n: i["type"] for n, i in ENTITIES.items()}).compile_goal(goal)
    request = stub.requests[0]
    assert request["response_format"]["json_schema"]["schema"] == GOAL_SCHEMA
    assert "(:action wash" in request["messages"][0]["content"]  # the domain PDDL is in the prompt
    assert "goal formula only" in request["messages"][0]["content"]

    stub.answer({"goal": "  (on mug_2 counter_1) (not (light-on light_2))  "})
    assert interpreter.interpret_task("...", "Kira", context) == "(and (on mug_2 counter_1) (not (light-on light_2)))"
    stub.answer({"goal": "(and (on mug_2 counter_1)"})
    with pytest.raises(PDDLParseError, match="not one PDDL formula.*not closed"):
        interpreter.interpret_task("...", "Kira", context)
    stub.answer({"goal": "on mug_2 counter_1"})
    with pytest.raises(PDDLParseError, match="expected '\\('"):
        interpreter.interpret_task("...", "Kira", context)
    stub.answer({"plan": "(pick-up robot mug_2)"})
    with pytest.raises(PDDLParseError, match="goal"):
        interpreter.interpret_task("...", "Kira", context)


def test_entity_selection_drops_hallucinated_names(stub, context):
    interpreter = interpreter_for(stub)
    stub.answer({"entities": ["MUG_1", "kitchen sink 1", "teapot_9", "mug_1", "kira", 3]})
    assert interpreter.select_entities(UPDATE_TEXT, "Kira", context) == ["mug_1", "kitchen_sink_1", "kira"]
    assert "at most 40" in stub.requests[0]["messages"][0]["content"]
    stub.answer({"entities": ["mug_1", "mug_2", "counter_1"]})
    assert interpreter.select_entities("mugs", "Kira", context, limit=2) == ["mug_1", "mug_2"]


def test_classify(stub):
    interpreter = interpreter_for(stub)
    stub.answer({"kind": "update"})
    assert interpreter.classify("I put my mug in the sink.", "Kira") == "update"
    assert stub.requests[0]["messages"][1]["content"].startswith('Kira says: "I put my mug in the sink."')
    stub.answer({"kind": "question"})
    with pytest.raises(LanguageModelError, match="expected"):
        interpreter.classify("Where is my mug?", "Kira")


def test_query_graph(stub, context):
    interpreter = interpreter_for(stub)
    stub.answer({"nodes": [{"id": "n1", "text": "Kira's red mug", "type": "dish"},
                           {"id": "n2", "text": "the sink", "type": "washbasin"}],
                 "edges": [{"source": "n1", "relation": "Inside", "target": "n2"},
                           {"source": "n1", "relation": "on", "target": "n9"}]})
    graph = interpreter.query_graph("I put my red mug in the sink.", "Kira", context)
    assert graph.nodes == (QueryNode("n1", "Kira's red mug", "dish"), QueryNode("n2", "the sink", None))
    assert graph.edges == (QueryEdge("n1", "inside", "n2"),)


def test_facts_are_sorted_and_capped(stub, context):
    facts = frozenset(Atom("dirty", (f"mug_{i:03d}",)) for i in range(10))
    text = format_facts(facts, 3)
    assert text.splitlines() == ["mug_000 -> dirty -> true", "mug_001 -> dirty -> true",
                                 "mug_002 -> dirty -> true", "... (7 more facts not shown)"]
    interpreter = interpreter_for(stub, max_facts=2)
    stub.answer({"REMOVE": [], "ADD": []})
    assert interpreter.interpret_update("nothing happened", "Kira", context) == Delta()
    assert "(2 more facts not shown)" in stub.requests[0]["messages"][1]["content"]


def test_usage_is_summed_over_calls(stub, context):
    interpreter = interpreter_for(stub)
    stub.answer({"kind": "task"}, prompt_tokens=100, completion_tokens=3)
    stub.answer({"entities": ["mug_1"]}, prompt_tokens=200, completion_tokens=8)
    stub.answer({"goal": "(not (dirty mug_1))"}, prompt_tokens=300, completion_tokens=12)
    interpreter.classify("wash my mug", "Kira")
    interpreter.select_entities("wash my mug", "Kira", context)
    interpreter.interpret_task("wash my mug", "Kira", context)
    usage = interpreter.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls, usage.total_tokens) == (600, 23, 3, 623)


def test_interpreter_over_a_cassette_replays_offline(stub, context, tmp_path):
    path = tmp_path / "interpreter.json"
    model = OpenAIModel("test-model", base_url=stub.url, timeout=5.0, max_retries=0)
    stub.answer(GOOD_UPDATE)
    recorded = LLMInterpreter(Cassette(path, mode="record", model=model)).interpret_update(UPDATE_TEXT, "Kira",
                                                                                          context)
    stub.stop()
    replayed = LLMInterpreter(Cassette(path)).interpret_update(UPDATE_TEXT, "Kira", context)
    assert recorded == replayed == EXPECTED_DELTA


def test_a_classification_failure_names_the_utterance_once():
    """The agent prefixes "could not classify '<text>'"; the interpreter's message must not repeat it."""
    from servicerobot.language.answers import AnswerFormatError
    from servicerobot.language.base import LanguageModelError
    from servicerobot.language.llm_interpreter import LLMInterpreter

    class Prose:
        name = "prose"

        def complete(self, messages, *, schema=None, temperature=0.0):
            raise AnswerFormatError("the answer is not JSON", "Sure!")

    with pytest.raises(LanguageModelError) as caught:
        LLMInterpreter(Prose()).classify("Make the bed.", "Ana")
    assert "could not classify" not in str(caught.value) and "not JSON" in str(caught.value)
