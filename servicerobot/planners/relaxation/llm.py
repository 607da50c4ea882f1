"""The language-model interpreter of Algorithm 1: problem generation, diagnosis, correction, goal shifting
and relaxation, each one JSON-schema call to a `LanguageModel` with prompts of our own wording
(`servicerobot/language/prompts/cm_*.txt`). Works with any model, a recorded `Cassette` included."""

from __future__ import annotations

from servicerobot.language.answers import AnswerFormatError
from servicerobot.language.base import LanguageModel, LanguageModelError, Usage
from servicerobot.language.llm_interpreter import load_prompt
from servicerobot.planners.relaxation.core import Adjustment, Draft, Toolbox

__all__ = ["CORRECT_SCHEMA", "DIAGNOSE_SCHEMA", "PROBLEM_SCHEMA", "RELAX_SCHEMA", "SHIFT_SCHEMA",
           "LLMRelaxInterpreter", "replacement_problem"]

PROBLEM_SCHEMA = {"title": "problem", "type": "object", "additionalProperties": False, "required": ["problem"],
                  "properties": {"problem": {"type": "string"}}}
CORRECT_SCHEMA = PROBLEM_SCHEMA
DIAGNOSE_SCHEMA = {"title": "diagnosis", "type": "object", "additionalProperties": False,
                   "required": ["diagnosis"], "properties": {"diagnosis": {"type": "string"}}}
SHIFT_SCHEMA = {
    "title": "shift", "type": "object", "additionalProperties": False, "required": ["replacements", "goal"],
    "properties": {
        "replacements": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["missing", "use"],
            "properties": {"missing": {"type": "string"}, "use": {"type": "array", "items": {"type": "string"}}}}},
        "goal": {"type": "string"}}}
RELAX_SCHEMA = {"title": "relax", "type": "object", "additionalProperties": False,
                "required": ["achievable", "goal", "dropped"],
                "properties": {"achievable": {"type": "boolean"}, "goal": {"type": "string"},
                               "dropped": {"type": "array", "items": {"type": "string"}}}}


def _strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()


class LLMRelaxInterpreter:
    """Algorithm 1 with a language model writing problems and shifting/relaxing goals (CM's interpreter).

    Args:
        model: any `LanguageModel` (an `OpenAIModel`, a local server, a `Cassette`).
        temperature: sampling temperature (CM fixes 0).
    """

    name = "llm"

    def __init__(self, model: LanguageModel, temperature: float = 0.0):
        if not isinstance(model, LanguageModel):
            raise TypeError(f"model must be a LanguageModel (complete(messages, schema=...)), got {model!r}")
        self.model = model
        self.temperature = temperature
        self.usage = Usage()
        self.calls: list[str] = []

    def begin(self, tools: Toolbox, task: str) -> None:
        from servicerobot.scenes.household import household_domain_text

        self.tools, self.world, self.task = tools, tools.world, task
        self.domain_text = household_domain_text()
        self.scene = self.world.scene_text()
        self.facts = "\n".join(sorted(str(a) for a in self.world.init if a.predicate != "connected"))
        self.facts += "\n(every room is connected to every other room)"

    def _ask(self, prompt: str, schema: dict, **values: str) -> dict:
        template = load_prompt(prompt)
        values = {"domain_pddl": self.domain_text, "scene": self.scene, "facts": self.facts, **values}
        messages = [{"role": role, "content": template[role].substitute(values)} for role in ("system", "user")]
        self.calls.append(prompt)
        try:
            completion = self.model.complete(messages, schema=schema, temperature=self.temperature)
        except AnswerFormatError as error:  # answered, but not JSON: its tokens were spent all the same
            self.usage.add(error.usage)
            raise
        self.usage.add(completion.usage)
        if not isinstance(completion.data, dict):
            raise AnswerFormatError(f"{prompt}: the model's answer is not a JSON object", completion.text)
        return completion.data

    def problem(self, goal_text: str, feedback: str) -> Draft:
        note = f"\nThe previous attempt failed in the scene:\n{feedback}\n" if feedback else ""
        try:
            data = self._ask("cm_problem", PROBLEM_SCHEMA, goal=goal_text, robot=self.world.robot,
                             init_loc=self.world.init_loc, feedback=note)
        except LanguageModelError as error:
            return Draft(None, goal_text, f"the model gave no problem: {error}")
        return Draft(_strip_fence(str(data.get("problem", ""))) or None, goal_text, "the model's problem was empty")

    def refine(self, draft: Draft, diagnostics: str) -> Draft | None:
        try:
            diagnosis = self._ask("cm_diagnose", DIAGNOSE_SCHEMA, goal=draft.goal_text, problem=draft.problem,
                                  errors=diagnostics)
            data = self._ask("cm_correct", CORRECT_SCHEMA, goal=draft.goal_text, problem=draft.problem,
                             diagnosis=str(diagnosis.get("diagnosis", "")))
        except LanguageModelError:
            return None
        fixed = _strip_fence(str(data.get("problem", "")))
        return Draft(fixed, draft.goal_text) if fixed else None

    def adjust(self, draft: Draft, diagnostics: str) -> Adjustment | None:
        try:
            shift = self._ask("cm_shift", SHIFT_SCHEMA, goal=draft.goal_text, errors=diagnostics)
            shifted = str(shift.get("goal") or draft.goal_text)
            relax = self._ask("cm_relax", RELAX_SCHEMA, goal=shifted, errors=diagnostics)
        except LanguageModelError:
            return None
        shifts, rejected = [], []
        for r in shift.get("replacements", []):
            if not isinstance(r, dict) or not isinstance(r.get("use"), list):
                continue
            missing = str(r.get("missing", ""))
            for use in map(str, r["use"]):
                why = replacement_problem(self.world, missing, use)
                if why:
                    rejected.append({"missing": missing, "use": use, "reason": why})
                else:
                    shifts.append({"missing": missing, "use": use, "score": None})
        dropped = [{"requirement": str(d), "reason": "the model judged it not achievable"}
                   for d in relax.get("dropped", [])]
        goal = str(relax.get("goal") or shifted)
        if goal.strip() == draft.goal_text.strip() and not shifts and not dropped:
            return None
        return Adjustment(goal, shifts, dropped, rejected)


_ITEM_TYPES = frozenset({"dish", "food", "clothing", "book", "gadget", "decor"})


def replacement_problem(world, missing: str, use: str) -> str:
    """Why scene object `use` cannot stand in for a missing `missing` ("" when it can): it must be an object of
    the scene (never a room, the robot or a person) of the missing thing's household type (an item of any
    type when that type is unknown)."""
    from servicerobot.envs.context_matters.objects import PROFILES
    from servicerobot.scenes.open_vocab import type_class

    kind = world.pddl_objects.get(use)
    if kind is None:
        return f"{use} is not an object of the scene"
    if kind in ("room", "robot", "person") or use in getattr(world, "rooms", {}):
        return f"{use} is a {kind}, not an object that can stand in for a {missing}"
    key = "_".join(missing.strip().lower().replace("-", " ").split())
    wanted = PROFILES[key].pddl_type if key in PROFILES else type_class(key).pddl_type if key else None
    if wanted is None:
        return "" if kind in _ITEM_TYPES else f"{use} is a {kind}, not an item like a missing {missing}"
    return "" if kind == wanted else f"{use} is a {kind}; a {missing} is a {wanted}"
