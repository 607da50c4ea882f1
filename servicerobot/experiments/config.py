"""Experiment grids from YAML: environment configs x agent variants x seeds.

```yaml
name: smoke
seeds: {start: 0, count: 2}        # or a list: [0, 1, 5]
variants: [oracle, search-rag]
agent: {planner_timeout: 20}       # optional: ServiceAgent options shared by every variant
# agent: {interpreter: llm, llm: {timeout: 30, max_retries: 3}}   # the language model's request limits
envs:
  - name: household-small
    kwargs: {size: small, n_tasks: 2, update_mode: verbal}
```

Shipped configs live in this package's `configs/` folder and are found by name (`load_config("smoke")`).
A config is checked whole when it loads: duplicate YAML keys, repeated variants or seeds (they would
write duplicate episode keys), grids over `MAX_EPISODES`, agent options, and each env's kwargs (by
building the env once: its own option check).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from servicerobot.errors import ServiceRobotError
from servicerobot.limits import excerpt, expanded_size, read_text_bounded, shorten

__all__ = ["AGENT_OPTIONS", "INTERPRETERS", "LLM_OPTIONS", "MAX_EPISODES", "ConfigError", "EnvConfig",
           "EpisodeSpec", "ExperimentConfig", "check_agent", "load_config", "parse_config", "shipped_configs"]

# ServiceAgent options a config may set (see `servicerobot.experiments.episode.make_agent`).
AGENT_OPTIONS = ("planner_timeout", "max_attempts", "fallback_to_full", "relax", "interpreter", "llm")
INTERPRETERS = ("default", "rules", "llm", "local-llm")  # local-llm: `servicerobot llm serve`, compact prompts
# OpenAIModel's, and `mode` (local-llm: "choose" among enumerated answers, the default, or "generate")
LLM_OPTIONS = {"timeout": float, "max_retries": int, "backoff": float, "model": str, "mode": str}
MAX_EPISODES = 100_000  # a grid larger than this is a typo (count: 100000000), not an experiment
MAX_CONFIG_BYTES = 1 << 20  # a config file; 100,000 seeds fit as {start, count} in a few bytes
MAX_SEED = 2**63 - 1  # seeds are non-negative (numpy's SeedSequence and gymnasium refuse negative ones)
_MAX_NODES = 1_000_000
_MAX_DEPTH = 50
_VARIANTS_EXTRA = ("oracle",)


class ConfigError(ServiceRobotError, ValueError):
    """An experiment config is missing, malformed or names something unknown."""


@dataclass(frozen=True)
class EnvConfig:
    """One environment setting: a name for reports and the `gym.make("ServiceRobot-v0", **kwargs)` kwargs."""

    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    env_id: str = "ServiceRobot-v0"


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode of a grid: everything a worker needs to run it, and its unique key."""

    config: str
    config_hash: str
    env: EnvConfig
    variant: str
    seed: int
    agent: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.config}/{self.env.name}/{self.variant}/{self.seed}"


@dataclass(frozen=True)
class ExperimentConfig:
    """A parsed grid; `hash` identifies its content (changing a setting changes the hash)."""

    name: str
    envs: tuple[EnvConfig, ...]
    variants: tuple[str, ...]
    seeds: Sequence[int]  # a range for {start, count}: never materialised beyond what is run
    agent: dict[str, Any]
    description: str = ""
    source: str = ""

    @property
    def hash(self) -> str:
        content = {"envs": [[e.name, e.env_id, e.kwargs] for e in self.envs], "variants": self.variants,
                   "seeds": list(self.seeds), "agent": self.agent}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]

    def episodes(self) -> list[EpisodeSpec]:
        """Every episode of the grid, env-major then variant then seed (the order results are listed)."""
        h = self.hash
        return [EpisodeSpec(self.name, h, env, variant, seed, dict(self.agent))
                for env in self.envs for variant in self.variants for seed in self.seeds]


def shipped_configs() -> dict[str, Path]:
    """Names and paths of the configs shipped with the package."""
    folder = resources.files("servicerobot.experiments") / "configs"
    return {Path(str(p)).stem: Path(str(p)) for p in folder.iterdir() if str(p).endswith(".yaml")}


def load_config(name_or_path: str | Path) -> ExperimentConfig:
    """Load a config file, or a shipped config by name (`smoke`, `l3mp_table1`, `l3mp_table2`)."""
    path = Path(name_or_path)
    if not os.path.lexists(path):  # anything there (a device, a folder) is refused by the bounded read
        shipped = shipped_configs()
        if str(name_or_path) not in shipped:
            raise ConfigError(f"no experiment config {shorten(str(name_or_path))}: not a file, and not one of the "
                              f"shipped configs {sorted(shipped)}")
        path = shipped[str(name_or_path)]
    try:
        text = read_text_bounded(path, MAX_CONFIG_BYTES, "experiment config", ConfigError)
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a safe loader
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: cannot read the config: {shorten(str(exc), 300)}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: the config is nested too deeply") from None
    _check_size(data, str(path))
    return parse_config(data, source=str(path))


def _check_size(data: Any, source: str) -> None:
    """Refuse YAML whose aliases expand it past `_MAX_NODES` (one anchor used over and over: a "billion
    laughs") or nest it deeper than `_MAX_DEPTH`: each node is visited once, its expanded size memoised."""
    def parts(x: Any):
        if not isinstance(x, (dict, list)):
            return 1, None
        return 1, ((y for kv in x.items() for y in kv) if isinstance(x, dict) else x)

    expanded_size(data, parts, limit=_MAX_NODES, max_depth=_MAX_DEPTH,
                  too_big=lambda: ConfigError(f"{source}: the config expands to more than {_MAX_NODES:,} values "
                                              "(YAML aliases used over and over?); an experiment grid is far smaller"),
                  too_deep=lambda: ConfigError(f"{source}: the config is nested more than {_MAX_DEPTH} levels deep"))


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser, when PyYAML has it: ~5x faster


class _UniqueKeyLoader(_SAFE_LOADER):
    """YAML's safe loader, refusing a key repeated in one mapping (plain YAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                repeated = key in seen
            except TypeError:  # an unhashable key: the base loader reports it
                break
            if repeated:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found duplicate key {key!r} (first at line {seen[key].line + 1})", key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def parse_config(data: Any, source: str = "<config>", check_envs: bool = True) -> ExperimentConfig:
    """Check and convert a config mapping (as loaded from YAML); with `check_envs`, build each env once
    so that bad env kwargs fail here, naming the env, not in every episode."""
    from servicerobot.agent import VARIANTS

    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a config is a mapping with keys name, envs, variants, seeds")
    unknown = set(data) - {"name", "description", "envs", "variants", "seeds", "agent"}
    if unknown:
        raise ConfigError(f"{source}: unknown keys {sorted(shorten(str(k), 40) for k in unknown)[:10]}; allowed: name, description, envs, "
                          "variants, seeds, agent")
    for key in ("name", "envs", "variants", "seeds"):
        if key not in data:
            raise ConfigError(f"{source}: missing key {key!r}")
    for key in ("name", "description"):
        value = data.get(key, "")
        if not isinstance(value, (str, int)) or isinstance(value, bool) or len(str(value)) > 4096:
            raise ConfigError(f"{source}: {key!r} must be a string (at most 4,096 characters), got {excerpt(value)}")
    if not str(data["name"]).strip():
        raise ConfigError(f"{source}: 'name' must not be empty (it starts every episode key)")
    variants = data["variants"]
    if not isinstance(variants, list) or not variants:
        raise ConfigError(f"{source}: 'variants' must be a non-empty list, got {excerpt(variants)}")
    from servicerobot.experiments.cm import CM_VARIANTS

    known = (*VARIANTS, *(v + "-noverify" for v in VARIANTS), *_VARIANTS_EXTRA, *CM_VARIANTS)
    for v in variants:
        if not isinstance(v, str) or v not in known:
            raise ConfigError(f"{source}: unknown variant {excerpt(v)}; choose from {', '.join(known)}")
    repeated = sorted(v for v, n in Counter(variants).items() if n > 1)
    if repeated:
        raise ConfigError(f"{source}: variants {repeated} are listed more than once (each episode key "
                          "config/env/variant/seed must be unique): list each variant once")
    agent = data.get("agent") or {}
    if not isinstance(agent, dict) or set(agent) - set(AGENT_OPTIONS):
        raise ConfigError(f"{source}: 'agent' must be a mapping with keys among {AGENT_OPTIONS}")
    check_agent(agent, source)
    if not isinstance(data["envs"], list):
        raise ConfigError(f"{source}: 'envs' must be a list of environments, each a mapping with a 'name' (and "
                          f"optional 'kwargs', 'id'), got {excerpt(data['envs'])}")
    envs = []
    for i, e in enumerate(data["envs"]):
        if not isinstance(e, dict) or "name" not in e or set(e) - {"name", "kwargs", "id"}:
            raise ConfigError(f"{source}: envs[{i}] must be a mapping with a 'name' (and optional 'kwargs', 'id'), "
                              f"got {excerpt(e)}")
        for key in ("name", "id"):
            value = e.get(key, "x")
            if not isinstance(value, (str, int)) or isinstance(value, bool) or not 0 < len(str(value)) <= 200:
                raise ConfigError(f"{source}: envs[{i}].{key} must be a string of 1-200 characters, got "
                                  f"{excerpt(value)}")
        kwargs = e.get("kwargs") or {}
        if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
            raise ConfigError(f"{source}: envs[{i}].kwargs must be a mapping of gym.make keyword arguments, got "
                              f"{excerpt(kwargs)}")
        envs.append(EnvConfig(str(e["name"]), dict(kwargs), str(e.get("id", "ServiceRobot-v0"))))
    if not envs:
        raise ConfigError(f"{source}: 'envs' must list at least one environment")
    if len({e.name for e in envs}) != len(envs):
        raise ConfigError(f"{source}: env names must be unique (they are part of each episode's key)")
    seeds = _seeds(data["seeds"], source, MAX_EPISODES // (len(envs) * len(variants)))
    if check_envs:
        for i, env in enumerate(envs):
            _check_env(env, f"{source}: envs[{i}] ({env.name!r})")
    return ExperimentConfig(str(data["name"]), tuple(envs), tuple(variants), seeds, agent,
                            str(data.get("description", "")), source)


def _seeds(value: Any, source: str, most: int) -> Sequence[int]:
    """The seeds, as a range for {start, count}; more than `most` (the grid's share of MAX_EPISODES) is
    refused before any is generated."""
    def integer(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if isinstance(value, dict) and set(value) <= {"start", "count"} and "count" in value:
        start, count = value.get("start", 0), value["count"]
        if not (integer(start) and integer(count)) or count < 1:
            raise ConfigError(f"{source}: 'seeds' {{start: S, count: N}} needs integers and N >= 1, got "
                              f"{excerpt(value)}")
        if count > most:
            raise _too_many(count, most, source)
        if not 0 <= start <= MAX_SEED - count + 1:
            raise ConfigError(f"{source}: seeds run from {start:,} to {start + count - 1:,}; a seed must be in "
                              f"[0, 2**63 - 1] (numpy and gymnasium refuse negative seeds)")
        return range(start, start + count)
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{source}: 'seeds' must be a list of integers or {{start: S, count: N}}, got "
                          f"{excerpt(value)}")
    if len(value) > most:  # before looking at each seed: a huge list is refused at once
        raise _too_many(len(value), most, source)
    bad = [s for s in value if not (integer(s) and 0 <= s <= MAX_SEED)][:1]  # a list: the bad seed may be None
    if bad:
        bad = bad[0]
        raise ConfigError(f"{source}: seeds must be integers in [0, 2**63 - 1] (numpy and gymnasium refuse negative "
                          f"seeds), got {excerpt(bad)}")
    seeds = tuple(value)
    repeated = sorted(s for s, n in Counter(seeds).items() if n > 1)
    if repeated:
        raise ConfigError(f"{source}: seeds {repeated[:10]} are listed more than once (each episode key "
                          "must be unique): list each seed once")
    return seeds


def _too_many(n: int, most: int, source: str) -> ConfigError:
    return ConfigError(f"{source}: {n:,} seeds make more than {MAX_EPISODES:,} episodes with these envs and "
                       f"variants (at most {most:,} seeds here); split the grid into several configs")


def check_agent(agent: dict, source: str) -> None:
    """Agent options: types and ranges, the interpreter's name, the language model's request limits."""
    timeout = agent.get("planner_timeout", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ConfigError(f"{source}: agent.planner_timeout must be a positive number of seconds, got {excerpt(timeout)}")
    attempts = agent.get("max_attempts", 3)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ConfigError(f"{source}: agent.max_attempts must be an integer >= 1, got {excerpt(attempts)}")
    for flag, default in (("fallback_to_full", True), ("relax", False)):
        if not isinstance(agent.get(flag, default), bool):
            raise ConfigError(f"{source}: agent.{flag} must be true or false, got {excerpt(agent[flag])}")
    if agent.get("interpreter", "default") not in INTERPRETERS:
        raise ConfigError(f"{source}: agent.interpreter must be one of {', '.join(INTERPRETERS)}, "
                          f"got {excerpt(agent['interpreter'])}")
    llm = agent.get("llm", {})
    if not isinstance(llm, dict) or set(llm) - set(LLM_OPTIONS):
        raise ConfigError(f"{source}: agent.llm must be a mapping with keys among {sorted(LLM_OPTIONS)}, got {excerpt(llm)}")
    for key, value in llm.items():
        kind = LLM_OPTIONS[key]
        if kind is str:
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{source}: agent.llm.{key} must be a model name, got {excerpt(value)}")
            continue
        number = isinstance(value, (int, float) if kind is float else int) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0 or (key == "timeout" and value == 0):
            wanted = "a number of seconds > 0 (finite, e.g. 30)" if key == "timeout" else \
                f"a {kind.__name__} >= 0" + (" (finite)" if kind is float else "")
            raise ConfigError(f"{source}: agent.llm.{key} must be {wanted}, got {excerpt(value)}")


def _check_env(env: EnvConfig, where: str) -> None:
    """Build the env once: its constructor checks every option (and names a wrong one)."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the ids)
    from servicerobot.envs.options import OptionError, check_make_options
    from servicerobot.experiments.cm import CM_ENV_ID, check_cm_env

    if env.env_id == CM_ENV_ID:  # Context Matters instances, not a Gymnasium env
        try:
            check_cm_env(env)
        except Exception as exc:  # noqa: BLE001 - any failure means the kwargs are wrong
            raise ConfigError(f"{where}: {type(exc).__name__}: {shorten(str(exc), 500)}") from None
        return
    if env.env_id not in gym.registry:
        known = sorted(k for k in gym.registry if k.startswith("ServiceRobot"))
        raise ConfigError(f"{where}: unknown env id {excerpt(env.env_id)}; choose from {[*known, CM_ENV_ID]}")
    try:  # the option spec first: types and ranges, named, without building anything
        check_make_options(env.env_id, env.kwargs)
    except OptionError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    try:
        made = gym.make(env.env_id, **env.kwargs)
    except Exception as exc:  # noqa: BLE001 - any constructor failure means the kwargs are wrong
        raise ConfigError(f"{where}: the env rejects its kwargs {excerpt(env.kwargs)}: {type(exc).__name__}: "
                          f"{shorten(str(exc), 500)}") from None
    made.close()
