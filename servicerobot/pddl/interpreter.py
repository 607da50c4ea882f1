"""Execute a domain's actions on states: ground, check, explain and apply actions, and test goals.

This is the simulator's hot path. Each ground action is compiled once, on first use, into frozensets
and closures (see `grounding`): a precondition that is a conjunction of literals is one
`frozenset.issubset` and one `isdisjoint` call, and applying an action is two set operations.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from servicerobot.errors import ActionError, PDDLError, PDDLSemanticError
from servicerobot.pddl._formulas import FormulaReader, article
from servicerobot.pddl._reader import Reader
from servicerobot.pddl._suggest import did_you_mean, name_list
from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.derived import Axioms
from servicerobot.pddl.explain import conjuncts, why_false
from servicerobot.pddl.goal import DerivedGoal, Goal
from servicerobot.pddl.goal_forms import GoalForm, formula_form, literal_form
from servicerobot.pddl.grounding import (
    CompiledEffects,
    Test,
    Universe,
    clear_interned,
    compile_effects,
    compile_test,
    ground_formula,
    substitute,
)
from servicerobot.pddl.model import (
    Action,
    And,
    AtomF,
    Domain,
    Equals,
    Exists,
    Forall,
    Formula,
    Imply,
    Not,
    Or,
    Problem,
)
from servicerobot.pddl.sexpr import parse_sexpr
from servicerobot.pddl.successors import applicable_actions
from servicerobot.pddl.templates import ActionTemplate, action_template, clear_parts
from servicerobot.pddl.writer import format_formula

__all__ = ["GroundAction", "Interpreter"]


_SHARED: dict[tuple, Interpreter] = {}  # see Interpreter.shared


class _DomainTables:
    """What every interpreter over one domain shares, since it depends on the domain and on names alone.

    `templates`: each action's template (or None: grounded by the general path). `templated`: (name, args)
    -> (GroundAction, _Compiled) of templated actions without quantifiers, whose compiled form reads only the
    arguments' names, so a new house whose rooms and fixtures keep their names finds most of its actions
    compiled already.
    `fits`: (object type, parameter type) -> whether an object of the one fits a parameter of the other,
    which every new ground action asks for each argument; `by_types`: (action name, its arguments' types) -> the
    action's template where it has no quantifier and the types fit (False otherwise), so that a new action
    text of that kind is checked by one lookup. `texts`: action text -> (`transition_text`'s
    lookup entry, the arguments, their types, the _Compiled), `goals`: goal text -> (formula, the
    objects it names, their types), and `forms`: goal text -> (its GoalForm or None, the same): a text reads
    the same in every universe whose objects named have the same types, so such a universe takes the answer
    as it is, without reading or type-checking the text.
    """

    __slots__ = ("by_types", "domain", "fits", "forms", "goals", "templated", "templates", "texts")

    def __init__(self, domain: Domain):
        self.domain = domain
        self.templates: dict[str, ActionTemplate | None] = {
            name: action_template(action, domain.constants) for name, action in domain.actions.items()}
        self.templated: dict[tuple, tuple] = {}
        self.fits: dict[tuple, bool] = {}
        self.by_types: dict[tuple, ActionTemplate | bool] = {}
        self.texts: dict[str, tuple] = {}
        self.goals: dict[str, tuple[Formula, tuple[str, ...], tuple[str, ...]]] = {}
        self.forms: dict[str, tuple[GoalForm | None, tuple[str, ...], tuple[str, ...]]] = {}

    def clear(self) -> None:
        """Forget the ground actions and texts (the templates and type answers stay: the domain's own)."""
        self.templated.clear()
        self.texts.clear()
        self.goals.clear()
        self.forms.clear()


_TABLES: dict[int, _DomainTables] = {}  # id(domain) -> its tables (see _tables)
MAX_SHARED = 200_000  # ground actions, action texts and goal texts kept per domain; a table is emptied beyond


def _tables(domain: Domain) -> _DomainTables:
    """The tables shared by every interpreter over `domain`, made on first use."""
    tables = _TABLES.get(id(domain))
    if tables is None or tables.domain is not domain:
        if len(_TABLES) >= 64:
            _TABLES.clear()
        tables = _TABLES[id(domain)] = _DomainTables(domain)
    return tables


def _keep(table: dict, key: object, value: object) -> None:
    """`table[key] = value`, emptying the table first when it holds `MAX_SHARED` entries."""
    if len(table) >= MAX_SHARED:
        table.clear()
    table[key] = value


def _shown(name: str, args: tuple[str, ...]) -> str:
    """`(name args...)` for an error message."""
    return _ascii_text(f"({' '.join((name, *args))})")


def _ascii_text(text: str) -> str:
    """User text for a message, with non-ASCII characters escaped (messages end up in ASCII-only spaces)."""
    return text.encode("ascii", "backslashreplace").decode("ascii")


@dataclass(frozen=True, slots=True)
class GroundAction:
    """An action name with its object arguments; `str()` gives `(name a b c)`."""

    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"({self.name}{' ' if self.args else ''}{' '.join(self.args)})"


class _Compiled:
    """What the interpreter knows about one ground action."""

    __slots__ = ("_checks", "action", "args", "effects", "pre")

    def __init__(self, action: Action, args: tuple[str, ...], pre: Test, effects: CompiledEffects):
        self.action = action
        self.args = args
        self.pre = pre
        self.effects = effects
        self._checks: list[tuple[Formula, Test]] | None = None

    @property
    def binding(self) -> dict[str, str]:
        """Each parameter's object (made when asked: stepping an action never needs it)."""
        return dict(zip((var for var, _ in self.action.params), self.args))

    def checks(self, universe: Universe) -> list[tuple[Formula, Test]]:
        """The precondition's top-level conjuncts, each ground and with its own test (for why_not)."""
        if self._checks is None:
            self._checks = [
                (part, compile_test(ground_formula(part, {}, universe)))
                for part in (substitute(c, self.binding) for c in conjuncts(self.action.precondition))
            ]
        return self._checks


class Interpreter:
    """Grounds and executes the actions of `domain` over a fixed set of objects.

    Args:
        domain: the domain whose actions are executed.
        objects: the problem's objects (name -> type); the domain's constants are added.
        values: the problem's static function values (`Problem.values`), for action costs.

    With derived predicates, every test (preconditions, conditions, goals) sees the state closed under the
    domain's rules; states themselves hold only basic atoms.

    Raises:
        PDDLSemanticError: an object of an unknown type, or one that clashes with a constant; derived
            predicates that cannot be stratified.
    """

    def __init__(self, domain: Domain, objects: Mapping[str, str], values: Mapping[Atom, float] | None = None):
        merged = dict(domain.constants)
        for name, typ in objects.items():
            if name in merged and merged[name] != typ:
                raise PDDLSemanticError(
                    f"object {name!r} is {article(typ)}, but the domain declares it as the constant "
                    f"{name!r} of type {merged[name]!r}"
                )
            merged[name] = typ
        self.domain = domain
        self.universe = Universe(domain.types, merged)
        self.objects: Mapping[str, str] = MappingProxyType(self.universe.objects)
        self._ground: dict[tuple, GroundAction] = {}
        self._compiled: dict[GroundAction, _Compiled] = {}
        self._goals: dict[object, Goal] = {}
        self._parsed: dict[str, GroundAction] = {}  # action text -> its ground action
        self._example: str | None = None  # an action of this domain for error messages (expected_form)
        self._stepped: dict[str, tuple] = {}  # action text -> what transition_text needs (see there)
        tables = _tables(domain)
        self._templates, self._templated, self._fits, self._texts = (tables.templates, tables.templated,
                                                                     tables.fits, tables.texts)
        self._goal_texts, self._goal_forms, self._by_types = tables.goals, tables.forms, tables.by_types
        self.values: Mapping[Atom, float] = MappingProxyType(dict(values or {}))
        self.axioms: Axioms | None = None
        if domain.derived:
            self.axioms = Axioms(domain, self.universe)
            self._closures: dict[State, frozenset[Atom]] = {}
            # only domains with derived predicates pay for the closure: the plain methods stay the hot path
            self.applicable = self._applicable_derived
            self.why_not = self._why_not_derived
            self.delta = self._delta_derived
            self.apply = self._apply_derived

    def __reduce__(self) -> tuple:
        # compiled closures cannot be pickled; rebuild from the domain and objects instead
        return (type(self), (self.domain, dict(self.universe.objects), dict(self.values)))

    @classmethod
    def shared(cls, domain: Domain, objects: Mapping[str, str]) -> Interpreter:
        """An interpreter over `objects`, reused from a recent call with the same domain and objects.

        Episodes over the same universe (a fixed FloorPlan or 3D scene graph, or a replayed seed) then find
        their actions grounded and their goals compiled already. Interpreters hold no state of the world,
        only what `domain` and `objects` determine, so sharing one is safe; the last 8 universes are kept.
        """
        key = (id(domain), tuple(objects.items()))
        found = _SHARED.pop(key, None)
        if found is None or found.domain is not domain:
            found = cls(domain, objects)
            while len(_SHARED) >= 8:
                del _SHARED[next(iter(_SHARED))]
        _SHARED[key] = found  # most recent last
        return found

    @staticmethod
    def clear_shared() -> None:
        """Forget the interpreters `shared` keeps, the ground actions and atoms shared across universes
        (benchmarks use it to time episodes over houses the process has not seen)."""
        _SHARED.clear()
        clear_interned()
        clear_parts()
        for tables in _TABLES.values():
            tables.clear()

    @classmethod
    def for_problem(cls, domain: Domain, problem: Problem) -> Interpreter:
        """An interpreter over the problem's objects (and the domain's constants)."""
        if problem.domain_name != domain.name:
            raise PDDLSemanticError(
                f"problem {problem.name!r} is for domain {problem.domain_name!r}, but the domain given is "
                f"{domain.name!r}"
            )
        return cls(domain, problem.objects, problem.values)

    # ------------------------------------------------------------------ grounding
    def ground(self, name: str, args: Sequence[str]) -> GroundAction:
        """The ground action `(name args...)`, checked and compiled on first use, then cached.

        Raises:
            ActionError: unknown action or object, wrong number of arguments, argument of the wrong type.
        """
        try:
            found = self._ground.get((name, args if type(args) is tuple else tuple(args)))
        except TypeError:  # not iterable, or unhashable: _ground_new says what is wrong
            found = None
        return found if found is not None else self._ground_new(name, args)

    def _ground_new(self, name: object, args: object) -> GroundAction:
        if not isinstance(name, str):
            raise ActionError(f"an action name must be a string, got {type(name).__name__}")
        if type(args) not in (tuple, list) and (isinstance(args, (str, bytes)) or not isinstance(args, Sequence)):
            raise ActionError(f"the arguments of {name!a} must be a sequence of object names, got {args!a}")
        raw = tuple(args)
        for arg in raw:
            if not isinstance(arg, str):
                raise ActionError(f"the arguments of {name!a} must be object names (strings), got {arg!a}")
        lname = name.strip().lower()
        largs = tuple([arg.strip().lower() for arg in raw])
        ga = self._ground.get((lname, largs))
        if ga is None:
            action = self.domain.actions.get(lname)
            if action is None:
                raise ActionError(
                    f"unknown action {name!a}{did_you_mean(lname, self.domain.actions)}; the actions are "
                    f"{name_list(self.domain.actions)}"
                )
            if len(largs) != action.arity:
                raise ActionError(
                    f"wrong arity: {lname} takes {action.arity} argument{'s' if action.arity != 1 else ''} "
                    f"{action.signature()}, but {_shown(lname, largs)} has {len(largs)}"
                )
            objects, fits = self.universe.objects, self._fits
            for arg, (var, typ) in zip(largs, action.params):
                otype = objects.get(arg)
                if otype is None:
                    raise ActionError(
                        f"unknown object {arg!a} in {_shown(lname, largs)}{did_you_mean(arg, objects)}"
                    )
                fit = fits.get((otype, typ))
                if fit is None:
                    fit = fits[(otype, typ)] = self.domain.types.is_subtype(otype, typ)
                if not fit:
                    raise ActionError(
                        f"{arg} is {article(otype)}, but parameter {var} of {lname} needs {article(typ)}"
                    )
            ga = self._compile_new(action, lname, largs)
        self._ground[(name, raw)] = ga
        return ga

    def _compile_new(self, action: Action, name: str, args: tuple[str, ...]) -> GroundAction:
        """Compile `(name args...)`, checked already (known action, arity, objects and their types), and
        remember it; from the domain's shared table when its template reads only the arguments' names."""
        template = self._templates[name]
        shared = self._templated.get((name, args)) if template is not None else None
        if shared is not None:  # checked against this universe's types; the rest reads only names
            ga, entry = shared
        else:
            ga = GroundAction(name, args)
            if template is not None:
                pre, effects = template.instantiate(args, self.universe)
            else:
                binding = dict(zip((var for var, _ in action.params), args))
                pre = compile_test(ground_formula(action.precondition, binding, self.universe))
                effects = compile_effects(action.effects, binding, self.universe)
            entry = _Compiled(action, args, pre, effects)
            if template is not None and not template.quantified:  # else it reads this universe's objects
                _keep(self._templated, (name, args), (ga, entry))
        self._compiled[ga] = entry
        self._ground[(name, args)] = ga
        return ga

    def _ground_written(self, text: str) -> GroundAction | None:
        """The action of `text` written as `str(GroundAction)` writes it (`(move robot kitchen hall)`:
        lower case, one space apart) and valid here, compiled without `parse_action`'s general steps; None
        for any other text (then `parse_action` reads it, or says what is wrong)."""
        if text[:1] != "(" or text[-1:] != ")":
            return None
        name, *words = text[1:-1].split(" ")
        action = self.domain.actions.get(name)
        if action is None or len(words) != action.arity:
            return None
        args = tuple(words)
        found = self._ground.get((name, args))
        if found is not None:
            return found
        objects, fits = self.universe.objects, self._fits
        for arg, (_, typ) in zip(args, action.params):
            otype = objects.get(arg)
            if otype is None or not fits.get((otype, typ)):  # unknown, not fitting, or not asked yet
                return None
        return self._compile_new(action, name, args)

    def parse_action(self, text: str) -> GroundAction:
        """Read `(pick-up robot mug_1 table_1 kitchen)` or `pick-up robot mug_1 table_1 kitchen`.

        Error messages quote the input with non-ASCII characters escaped.

        Raises:
            ActionError: anything but one well-formed, known, well-typed action (never another error).
        """
        try:
            found = self._parsed.get(text)
        except TypeError:  # unhashable: _parse_new says what is wrong with it
            found = None
        if found is not None:
            return found
        ga = self._parse_new(text)
        if len(self._parsed) >= 65536:  # agents that invent endless spellings must not grow it forever
            self._parsed.clear()
        self._parsed[text] = ga
        return ga

    def expected_form(self) -> str:
        """How an action is written, with an example from this domain and objects: "expected one action like
        '(move robot kitchen hall)' or 'move robot kitchen hall'" (each world shows one of its own actions)."""
        if self._example is None:
            self._example = self._example_action()
        return f"expected one action like '({self._example})' or '{self._example}'"

    def _example_action(self) -> str:
        """The first action of the domain whose parameters all have objects, on the first such objects."""
        for action in self.domain.actions.values():
            args, used = [], {}
            for _, typ in action.params:
                objects = self.universe.of_type(typ)
                if not objects:
                    break
                k = used.get(typ, 0)
                used[typ] = k + 1
                args.append(objects[k % len(objects)])  # two rooms, not the same room twice
            else:
                return " ".join([action.name, *args])
        first = next(iter(self.domain.actions.values()), None)
        return " ".join([first.name, *(f"?{var}" for var, _ in first.params)]) if first else "name arg ..."

    def _parse_new(self, text: object) -> GroundAction:
        if not isinstance(text, str):
            raise ActionError(f"{self.expected_form()}, got {type(text).__name__}")
        body = text.strip()
        if body.startswith("("):
            if not body.endswith(")"):
                raise ActionError(f"{self.expected_form()}; the '(' in {text!a} is never closed")
            body = body[1:-1]
        if "(" in body or ")" in body:
            raise ActionError(f"{self.expected_form()}, without nested or unbalanced parentheses: {text!a}")
        words = body.split()
        if not words:
            raise ActionError(f"{self.expected_form()}; got an empty action {text!a}")
        return self.ground(words[0], words[1:])

    def _entry(self, ga: GroundAction | str) -> _Compiled:
        entry = self._compiled.get(ga) if isinstance(ga, GroundAction) else None
        if entry is None:
            if isinstance(ga, str):
                ga = self.parse_action(ga)
            elif isinstance(ga, GroundAction):
                ga = self.ground(ga.name, ga.args)
            else:
                raise ActionError(f"expected a GroundAction or an action string, got {type(ga).__name__}")
            entry = self._compiled[ga]
        return entry

    # ------------------------------------------------------------------ execution
    def applicable(self, ga: GroundAction, state: State) -> bool:
        """True if the precondition of `ga` holds in `state`."""
        entry = self._compiled.get(ga)
        if entry is None:
            entry = self._entry(ga)
        return entry.pre(state)

    def why_not(self, ga: GroundAction, state: State) -> str | None:
        """None if `ga` is applicable in `state`; else the first failing precondition, in ground PDDL."""
        entry = self._entry(ga)
        if entry.pre(state):
            return None
        for part, test in entry.checks(self.universe):
            if not test(state):
                return f"precondition {format_formula(part)} is false{why_false(part, self.universe, state)}"
        return f"precondition {format_formula(entry.action.precondition)} is false"  # pragma: no cover

    def delta(self, ga: GroundAction, state: State) -> tuple[frozenset[Atom], frozenset[Atom]]:
        """(adds, deletes) of `ga` in `state`, conditional effects resolved.

        An atom that is both added and deleted counts as added (PDDL deletes first, then adds).
        """
        return _resolved(self._entry(ga).effects, state)

    def transition(self, ga: GroundAction, state: State) -> tuple[str | None, frozenset[Atom], frozenset[Atom]]:
        """`(None, adds, deletes)` if `ga` is applicable in `state`, else `(why_not, {}, {})`: one lookup
        for what a simulator step needs."""
        entry = self._compiled.get(ga)
        if entry is None or self.axioms is not None or not entry.pre(state):
            reason = self.why_not(ga, state)
            if reason is not None:
                return reason, frozenset(), frozenset()
            return None, *self.delta(ga, state)
        effects = entry.effects
        if effects.conditional:
            return None, *self.delta(ga, state)
        return None, effects.adds, effects.dels

    def transition_text(self, text: str, state: State) -> tuple[GroundAction, str, str | None, frozenset[Atom],
                                                                 frozenset[Atom]]:
        """`parse_action(text)` then `transition` on `state` (a set): `(action, str(action), why_not or None,
        adds, deletes)`, from one lookup by text for actions seen before (a simulator's step).

        Raises:
            ActionError: as `parse_action`.
        """
        try:
            hit = self._stepped.get(text)
        except TypeError:  # unhashable: parse_action says what is wrong with it
            hit = None
        if hit is None:
            hit = self._stepped_new(text)
        pre, done, ga, shown = hit
        if pre is not None and pre(state):
            return done if type(done) is tuple else (ga, shown, None, *_resolved(done, state))
        return (ga, shown, *self.transition(ga, state if type(state) is frozenset else frozenset(state)))

    def _stepped_new(self, text: str) -> tuple:
        """`transition_text`'s lookup entry for `text`, not seen by this interpreter: (the precondition's
        test, or None with derived predicates; the answer when applicable, or the CompiledEffects to resolve
        when they are conditional; the action; its text). Taken from the domain's shared table when the text names objects of the same
        types as in the universe that first read it (then it reads as the same compiled action); the text is
        parsed (which raises ActionError for a bad one) otherwise."""
        shared = self._texts.get(text) if type(text) is str else None
        if shared is not None and tuple(map(self.universe.objects.get, shared[1])) == shared[2]:
            hit = shared[0]
            self._compiled[hit[2]] = shared[3]
        elif type(text) is str and (hit := self._written_templated(text)) is not None:
            pass
        else:
            ga = (self._ground_written(text) if type(text) is str else None) or self.parse_action(text)
            entry = self._compiled[ga]
            effects, shown = entry.effects, str(ga)
            done = effects if effects.conditional else (ga, shown, None, effects.adds, effects.dels)  # the answer
            hit = (entry.pre if self.axioms is None else None, done, ga, shown)
            templated = self._templated.get((ga.name, ga.args))
            if templated is not None and templated[1] is entry:  # compiled from names alone: any universe
                types = tuple(map(self.universe.objects.get, ga.args))
                _keep(self._texts, text, (hit, ga.args, types, entry))
        if len(self._stepped) >= 65536:
            self._stepped.clear()
        self._stepped[text] = hit
        return hit

    def _written_templated(self, text: str) -> tuple | None:
        """`_stepped_new`'s entry for `text` written as `str(GroundAction)` writes it, of an action whose
        template reads only its arguments' names (no quantifier), on arguments whose types fit (checked by
        one lookup per action and types); compiled from the template unless known. None for any other text
        (the general steps read it)."""
        if text[:1] != "(" or text[-1:] != ")":
            return None
        name, *words = text[1:-1].split(" ")
        args = tuple(words)
        objects = self.universe.objects
        types = tuple(map(objects.get, args))
        template = self._by_types.get((name, types))
        if template is None:
            template = self._template_for(name, types)
        if template is False:
            return None
        ga = self._ground.get((name, args))
        if ga is not None:
            entry = self._compiled[ga]
        else:
            shared = self._templated.get((name, args))
            if shared is None:
                ga = GroundAction(name, args)
                entry = _Compiled(self.domain.actions[name], args, *template.instantiate(args, self.universe))
                _keep(self._templated, (name, args), (ga, entry))
            else:
                ga, entry = shared
            self._compiled[ga] = entry
            self._ground[(name, args)] = ga
        effects = entry.effects
        done = effects if effects.conditional else (ga, text, None, effects.adds, effects.dels)
        hit = (entry.pre, done, ga, text)
        _keep(self._texts, text, (hit, args, types, entry))  # it reads only names: any universe
        return hit

    def _template_for(self, name: str, types: tuple) -> ActionTemplate | bool:
        """The template of action `name` if it has no quantifier and arguments of `types` fit it, else False."""
        action = self.domain.actions.get(name)
        template = self._templates.get(name) if action is not None and self.axioms is None else None
        if template is None or template.quantified or len(types) != action.arity:
            template = False
        else:
            for otype, (_, typ) in zip(types, action.params):
                if otype is None:
                    template = False
                    break
                fit = self._fits.get((otype, typ))
                if fit is None:
                    fit = self._fits[(otype, typ)] = self.domain.types.is_subtype(otype, typ)
                if not fit:
                    template = False
                    break
        _keep(self._by_types, (name, types), template)
        return template

    def apply(self, ga: GroundAction, state: State) -> State:
        """The successor state (deletes, then adds), without checking applicability."""
        entry = self._compiled.get(ga)
        if entry is None:
            entry = self._entry(ga)
        effects = entry.effects
        if type(state) is not frozenset:
            state = frozenset(state)
        if effects.conditional:
            adds, dels = self.delta(ga, state)
        else:
            adds, dels = effects.adds, effects.dels
        if dels:
            state = state - dels
        return state | adds if adds else state

    def step(self, ga: GroundAction | str, state: State) -> State:
        """Apply `ga` if it is applicable.

        Raises:
            ActionError: the action is inapplicable (the message says which precondition fails) or malformed.
        """
        if isinstance(ga, str):
            ga = self.parse_action(ga)
        reason = self.why_not(ga, state)
        if reason is not None:
            raise ActionError(f"cannot apply {ga}: {reason}")
        return self.apply(ga, state)

    def applicable_actions(self, state: State) -> Iterator[GroundAction]:
        """Every ground action applicable in `state`, action by action in domain order, arguments sorted."""
        return applicable_actions(self, self.closure(state) if self.axioms is not None else state)

    # ------------------------------------------------------------------ derived predicates and costs
    def closure(self, state: State) -> frozenset[Atom]:
        """`state` with the derived atoms that hold in it (the state itself without derived predicates)."""
        if self.axioms is None:
            return state if type(state) is frozenset else frozenset(state)
        if type(state) is not frozenset:
            state = frozenset(state)
        full = self._closures.get(state)
        if full is None:
            if len(self._closures) >= 4096:
                self._closures.clear()
            full = self._closures[state] = self.axioms.closure(state)
            self._closures[full] = full  # closed already: tests that close again find it here
        return full

    def _applicable_derived(self, ga: GroundAction, state: State) -> bool:
        return Interpreter.applicable(self, ga, self.closure(state))

    def _why_not_derived(self, ga: GroundAction, state: State) -> str | None:
        return Interpreter.why_not(self, ga, self.closure(state))

    def _delta_derived(self, ga: GroundAction, state: State) -> tuple[frozenset[Atom], frozenset[Atom]]:
        return Interpreter.delta(self, ga, self.closure(state))

    def _apply_derived(self, ga: GroundAction, state: State) -> State:
        adds, dels = Interpreter.delta(self, ga, self.closure(state))
        if type(state) is not frozenset:
            state = frozenset(state)
        return (state - dels) | adds

    def cost(self, ga: GroundAction | str) -> float:
        """The action's cost: the sum of its `(increase (total-cost) x)` terms, function terms read from the
        problem's values (0 when it has none; a domain without action costs counts every action as 1).

        Raises:
            ActionError: a malformed action, or a cost term without a value in the problem's :init.
        """
        entry = self._entry(ga)
        if not self.domain.has_action_costs:
            return 1
        total = 0
        for term in entry.action.cost:
            if isinstance(term, AtomF):
                atom = term.ground(entry.binding)
                value = self.values.get(atom)
                if value is None:
                    raise ActionError(f"the cost {atom} of {ga} has no value; give it in :init as (= {atom} <n>)")
                total += value
            else:
                total += term
        return total

    # ------------------------------------------------------------------ goals
    def compile_goal(self, goal: Formula | str | Goal) -> Goal:
        """A Goal for a formula or for text such as `(and ...)` or `(:goal (...))`; cached.

        Raises:
            PDDLParseError: malformed goal text.
            PDDLSemanticError: unknown predicate or object, arity or type error in the goal.
        """
        if isinstance(goal, Goal):
            return goal
        cached = self._goals.get(goal)
        if cached is not None:
            return cached
        if isinstance(goal, str):
            formula = self._goal_formula(goal)
            compiled = self._goals.get(formula) or self._new_goal(formula)
        else:
            self._read_goal(format_formula(goal), "<goal formula>")  # checks names, arities and types
            compiled = self._new_goal(goal)
            formula = goal
        self._goals[goal] = self._goals[formula] = compiled
        return compiled

    def goal_form(self, text: str) -> GoalForm | None:
        """The goal of `text` as a `GoalForm` (ground literals and one-variable clauses, see `goal_forms`),
        checked as `compile_goal` checks it; None for a goal of another shape, one `compile_goal` would
        refuse, or a domain with derived predicates (its goals are tested on the closure)."""
        if self.axioms is not None or type(text) is not str:
            return None
        objects = self.universe.objects
        shared = self._goal_forms.get(text)
        if shared is not None and tuple(map(objects.get, shared[1])) == shared[2]:
            return shared[0]
        form = self._new_goal_form(text)
        names = form.names if form is not None else ()
        _keep(self._goal_forms, text, (form, names, tuple(map(objects.get, names))))
        return form

    def _new_goal_form(self, text: str) -> GoalForm | None:
        literals, clauses = literal_form(text), ()
        if literals is None:
            try:
                found = formula_form(self._goal_formula(text))
            except PDDLError:  # compile_goal says what is wrong
                return None
            if found is None:
                return None
            literals, clauses = found
        predicates, objects, fits = self.domain.predicates, self.universe.objects, self._fits
        pos, neg, names = [], [], {}
        for positive, name, args in literals:
            predicate = predicates.get(name)
            if predicate is None or predicate.arity != len(args):
                return None
            for arg, (_, typ) in zip(args, predicate.params):
                otype = objects.get(arg)
                if otype is None:
                    return None
                fit = fits.get((otype, typ))
                if fit is None:
                    fit = fits[(otype, typ)] = self.domain.types.is_subtype(otype, typ)
                if not fit:
                    return None
                names[arg] = None
            (pos if positive else neg).append(self.universe.atom(name, args))
        return GoalForm(frozenset(pos), frozenset(neg), tuple(clauses), tuple(names))

    def _new_goal(self, formula: Formula) -> Goal:
        if self.axioms is None:
            return Goal(formula, self.universe)
        return DerivedGoal(formula, self.universe, self.closure)

    def _goal_formula(self, text: str) -> Formula:
        """`_read_goal(text)`, or the formula an interpreter of this domain read from the same text, when
        the objects it names have the same types here (then reading it again gives the same formula)."""
        shared = self._goal_texts.get(text)
        objects = self.universe.objects
        if shared is not None and tuple(map(objects.get, shared[1])) == shared[2]:
            return shared[0]
        formula = self._read_goal(text, "<goal>")
        names = tuple(_named_objects(formula, {}))
        _keep(self._goal_texts, text, (formula, names, tuple(map(objects.get, names))))
        return formula

    def _read_goal(self, text: str, source: str) -> Formula:
        expr = parse_sexpr(text, source)
        rd = Reader(text, source)
        if expr and expr[0] == ":goal":
            if len(expr) != 2:
                rd.syntax("expected '(:goal <formula>)' with exactly one formula", expr)
            expr = expr[1]
        reader = FormulaReader(rd, self.domain.predicates, self.domain.types, self.universe.objects, "object")
        return reader.formula(expr, {}, "in the goal")


def _resolved(effects: CompiledEffects, state: State) -> tuple[frozenset[Atom], frozenset[Atom]]:
    """(adds, deletes) of `effects` in `state`: the conditional effects whose condition holds joined in (an
    atom both added and deleted counts as added); the unconditional sets themselves when none holds."""
    adds, dels = effects.adds, effects.dels
    if not effects.conditional:
        return adds, dels
    fired = [(a, d) for test, a, d in effects.conditional if test(state)]
    if not fired:
        return adds, dels  # `dels` holds no atom of `adds` (CompiledEffects)
    adds = adds.union(*[a for a, _ in fired])
    return adds, dels.union(*[d for _, d in fired]) - adds


def _named_objects(f: Formula, found: dict[str, None]) -> dict[str, None]:
    """The objects (and constants) `f` names, in order of first mention, added to `found` (its variables
    left out): what reading `f` checked against a universe besides the domain."""
    if isinstance(f, AtomF):
        for term in f.terms:
            if not term.startswith("?"):
                found[term] = None
    elif isinstance(f, Equals):
        for term in (f.a, f.b):
            if not term.startswith("?"):
                found[term] = None
    elif isinstance(f, (And, Or)):
        for part in f.parts:
            _named_objects(part, found)
    elif isinstance(f, Not):
        _named_objects(f.f, found)
    elif isinstance(f, Imply):
        _named_objects(f.a, found)
        _named_objects(f.b, found)
    elif isinstance(f, (Exists, Forall)):
        _named_objects(f.body, found)
    return found
