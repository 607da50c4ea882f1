"""`ServiceRobot-PDDLGym-v0`: every PDDLGym environment as a Gymnasium 1.x environment on our interpreter.

PDDLGym's conventions are kept: an observation is the set of true literals, the objects and the goal; an
action is a ground literal of an action predicate (`(stack a b)`, or PDDLGym's `stack(a:block,b:block)`);
the reward is 1 when the goal holds (then `terminated`), else 0; an action that no operator can execute
leaves the state as it is (PDDLGym's `raise_error_on_invalid_action=False`), with the reason in
`info["action_error"]`; `reset(seed=s)` picks the problem PDDLGym's `reset(seed=s)` picks unless
`problem_index` fixes it; `env.action_space.sample(obs)` samples a literal as PDDLGym's spaces do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from servicerobot.envs.options import OptionError, check_options
from servicerobot.envs.pddlgym.files import PDDLGymFileError, PDDLGymSpec, registered_domains
from servicerobot.envs.pddlgym.planning import LiteralPlanning
from servicerobot.envs.pddlgym.task import PDDLGymDomain, PDDLGymTask, observation_state
from servicerobot.errors import ActionError
from servicerobot.limits import excerpt, shorten
from servicerobot.pddl._suggest import did_you_mean
from servicerobot.pddl.atoms import Atom, State
from servicerobot.pddl.writer import format_formula

__all__ = ["LiteralSpace", "PDDLGymEnv", "load_domain", "make_env", "observation_state"]

CHARSET = frozenset(chr(c) for c in range(32, 127)) | {"\n"}
_MAX_TEXT = 1 << 22

_DOMAINS: dict[tuple, PDDLGymDomain] = {}


def load_domain(domain: str = "blocks", test: bool = False, operators_as_actions: bool | None = None,
                domain_file: str | Path | None = None, problem_dir: str | Path | None = None
                ) -> tuple[PDDLGymDomain, PDDLGymSpec]:
    """A PDDLGym domain by name (as pddlgym registers it) or by files, parsed once per process.

    Raises:
        PDDLGymMissingError: a name was given and pddlgym is not installed.
        ValueError: no registered domain has that name.
        PDDLGymFileError: a file or folder cannot be read (see `files.read_pddl_file`).
    """
    if domain_file is not None:
        spec = PDDLGymSpec(Path(domain_file).stem, bool(operators_as_actions), False, None)
        files = (Path(domain_file), Path(problem_dir if problem_dir is not None else Path(domain_file).with_suffix("")))
    else:
        table = registered_domains()
        spec = table.get(str(domain).lower())
        if spec is None:
            raise ValueError(f"unknown PDDLGym domain {excerpt(domain)}{did_you_mean(str(domain).lower(), table)}; "
                             f"pddlgym registers {len(table)}: {', '.join(sorted(table))}")
        files = spec.files(test)
        if operators_as_actions is not None:
            spec = PDDLGymSpec(spec.name, operators_as_actions, spec.dynamic_action_space, spec.render)
    key = (*map(str, files), spec.operators_as_actions)
    found = _DOMAINS.get(key)
    if found is None:
        found = _DOMAINS[key] = PDDLGymDomain(*files, operators_as_actions=spec.operators_as_actions)
    return found, spec


class LiteralSpace(spaces.Text):
    """A Text space of action literals that also samples literals the PDDLGym way.

    `sample(obs)` (an observation as the mask argument, PDDLGym's `action_space.sample(state)`) returns a
    literal: any well-typed one, or only those that change the state when the space is dynamic (PDDLGym's
    `dynamic_action_space`). `sample()` without an observation samples text, as `spaces.Text` does.
    """

    def __init__(self, dynamic: bool = False, seed: int | np.random.Generator | None = None):
        super().__init__(max_length=512, min_length=0, charset=CHARSET, seed=seed)
        self.dynamic = dynamic
        self.task: PDDLGymTask | None = None

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A literal for an observation (see the class docstring), else random text."""
        if isinstance(mask, dict) and "literals" in mask:
            if self.task is None:
                raise RuntimeError("call env.reset() before sampling literals")
            state = observation_state(mask)
            base = frozenset(a for a in state if a.predicate not in self.task.gym_domain.domain.derived)
            if not self.dynamic:
                return self.task.sample_literal(self.np_random)
            choices = self.task.valid_literals(base)
            if not choices:
                raise RuntimeError("no action literal changes this state")
            return choices[int(self.np_random.integers(len(choices)))]
        return super().sample(mask, probability)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LiteralSpace) and self.dynamic == other.dynamic and super().__eq__(other)

    __hash__ = None


class PDDLGymEnv(gym.Env):
    """A PDDLGym environment executed by our PDDL interpreter.

    Args:
        domain: a PDDLGym domain name (`"blocks"`, `"sokoban"`, ...; see `registered_domains()`).
        problem_index: fix the problem (PDDLGym's `fix_problem_index`); None picks one per reset.
        test: use the `_test` problems (PDDLGym's `PDDLEnv<Name>Test-v0`).
        operators_as_actions: override PDDLGym's registration of the domain (None: as registered).
        dynamic_action_space: override PDDLGym's registration of the domain (None: as registered).
        domain_file: a domain outside the package (then `domain` is ignored).
        problem_dir: the folder of that domain's problems (default: `domain_file` without its suffix).
        render_mode: `"ansi"` (the literals as text) or `"rgb_array"` (PDDLGym's drawing when pddlgym
            imports and draws this domain, else the literals drawn as text).

    Every option is checked by `servicerobot.envs.options` (table "pddlgym", docs/options.md) first: a wrong
    type, range or name raises `OptionError`; an unreadable file `PDDLGymFileError`.
    """

    metadata: ClassVar[dict] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, domain: str = "blocks", problem_index: int | None = None, test: bool = False,
                 operators_as_actions: bool | None = None, dynamic_action_space: bool | None = None,
                 domain_file: str | Path | None = None, problem_dir: str | Path | None = None,
                 render_mode: str | None = None, **unknown: object):
        opts = check_options("pddlgym", {
            "domain": domain, "problem_index": problem_index, "test": test,
            "operators_as_actions": operators_as_actions, "dynamic_action_space": dynamic_action_space,
            "domain_file": domain_file, "problem_dir": problem_dir, "render_mode": render_mode, **unknown})
        domain, problem_index, render_mode = opts["domain"], opts["problem_index"], opts["render_mode"]
        operators_as_actions, dynamic_action_space = opts["operators_as_actions"], opts["dynamic_action_space"]
        self.gym_domain, self.spec_pddlgym = load_domain(domain, opts["test"], operators_as_actions,
                                                         opts["domain_file"], opts["problem_dir"])
        if not self.gym_domain.problem_files:
            raise PDDLGymFileError(f"{shorten(str(self.gym_domain.problem_dir), 200)} has no problem files (*.pddl)")
        self.problem_index = self._checked_index(problem_index)
        self.render_mode = render_mode
        dynamic = self.spec_pddlgym.dynamic_action_space if dynamic_action_space is None else dynamic_action_space
        self.observation_space = spaces.Dict({
            "literals": spaces.Text(max_length=_MAX_TEXT, min_length=0, charset=CHARSET),
            "objects": spaces.Text(max_length=_MAX_TEXT, min_length=0, charset=CHARSET),
            "goal": spaces.Text(max_length=_MAX_TEXT, min_length=0, charset=CHARSET),
        })
        self.action_space = LiteralSpace(dynamic)
        self._problem_rng = np.random.RandomState(0)  # PDDLGym's problem choice: seed 0 until reset(seed=...)
        self.task: PDDLGymTask | None = None
        self.state: State = frozenset()
        self._tasks: dict[int, PDDLGymTask] = {}

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start an episode on the fixed problem, or on the one PDDLGym would pick for this seed. `options`
        may hold only `problem_index` (a mistyped name is refused, not ignored: a random problem would run)."""
        if options is not None and (not isinstance(options, dict) or set(options) - {"problem_index"}):
            got = ", ".join(map(excerpt, options)) if isinstance(options, dict) else excerpt(options)
            raise OptionError(f"reset() options may hold only 'problem_index', got {got}")
        super().reset(seed=seed)
        if seed is not None:
            # pddlgym draws the problem with RandomState(seed), which takes seeds below 2**32: a larger seed is
            # given as its 32-bit words
            words = [(seed >> shift) & 0xFFFFFFFF for shift in range(0, max(seed.bit_length(), 1), 32)]
            self._problem_rng = np.random.RandomState(seed if seed < 1 << 32 else words)
            self.action_space.seed(seed)
        index = self.problem_index
        if options and "problem_index" in options:
            index = self._checked_index(check_options("pddlgym", {"problem_index": options["problem_index"]})
                                        ["problem_index"])
        if index is None:
            index = int(self._problem_rng.choice(len(self.gym_domain.problem_files)))
        task = self._tasks.get(index)
        if task is None:
            task = self._tasks[index] = self.gym_domain.task(index)
        self.task, self._index = task, index
        self.action_space.task = task
        self.state = task.init
        self._objects_text = "\n".join(f"{name} - {typ}" for name, typ in sorted(task.objects.items()))
        self._goal_text = format_formula(task.problem.goal)
        return self._observation(), self._info(None)

    def step(self, action: str) -> tuple[dict, float, bool, bool, dict]:
        """Apply one action literal; an invalid one changes nothing and says why in `info["action_error"]`."""
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        try:
            self.state, error = self.task.step(self.state, action, self.np_random)
        except ActionError as exc:
            error = str(exc)
        done = self.task.goal_reached(self.state)
        return self._observation(), 1.0 if done else 0.0, done, False, self._info(error)

    def render(self) -> str | np.ndarray | None:
        """The literals as text (`ansi`) or as an image (`rgb_array`)."""
        if self.render_mode is None or self.task is None:
            return None
        literals = sorted(self.task.literals(self.state))
        if self.render_mode == "ansi":
            return "\n".join(map(str, literals)) + "\n"
        from servicerobot.envs.pddlgym.render import render_literals

        return render_literals(self.spec_pddlgym.render, literals, self.task.objects)

    # ------------------------------------------------------------------ helpers
    def _checked_index(self, index: int | None) -> int | None:
        count = len(self.gym_domain.problem_files)
        if index is not None and index >= count:
            folder = shorten(str(self.gym_domain.problem_dir), 200)
            raise OptionError(f"problem_index {index} is out of range: {folder} has {count} problems (0 to {count - 1})")
        return index

    def valid_actions(self) -> list[str]:
        """The action literals that change the current state (PDDLGym's dynamic action space), sorted."""
        if self.task is None:
            raise RuntimeError("call reset() before valid_actions()")
        return self.task.valid_literals(self.state)

    def planning_view(self) -> LiteralPlanning:
        """What `ServiceAgent.from_env` plans with: this env's executable domain, the problem an observation
        states, and the literal for a planned step (`servicerobot.envs.pddlgym.planning`)."""
        return LiteralPlanning(self.gym_domain)

    @property
    def literals(self) -> frozenset[Atom]:
        """The true literals now, derived ones included (what PDDLGym's `obs.literals` holds)."""
        return self.task.literals(self.state) if self.task is not None else frozenset()

    def _observation(self) -> dict:
        return {"literals": "\n".join(sorted(map(str, self.task.literals(self.state)))),
                "objects": self._objects_text, "goal": self._goal_text}

    def _info(self, error: str | None) -> dict:
        return {"problem_file": str(self.gym_domain.problem_files[self._index]),
                "domain_file": str(self.gym_domain.domain_file), "problem_index": self._index,
                "action_error": error}


def make_env(**options: object) -> PDDLGymEnv:
    """The registered id's entry point: `PDDLGymEnv(**options)`. A function rather than the class, so that
    `gym.make` leaves `render_mode` to the env's option check (as `servicerobot.envs.core.make_env`)."""
    return PDDLGymEnv(**options)
