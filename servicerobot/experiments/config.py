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
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from servicerobot.errors import ServiceRobotError

__all__ = ["AGENT_OPTIONS", "INTERPRETERS", "LLM_OPTIONS", "MAX_EPISODES", "ConfigError", "EnvConfig",
           "EpisodeSpec", "ExperimentConfig", "check_agent", "load_config", "parse_config", "shipped_configs"]

# ServiceAgent options a config may set (see `servicerobot.experiments.episode.make_agent`).
AGENT_OPTIONS = ("planner_timeout", "max_attempts", "fallback_to_full", "relax", "interpreter", "llm")
INTERPRETERS = ("default", "rules", "llm", "local-llm")  # local-llm: `servicerobot llm serve`, compact prompts
LLM_OPTIONS = {"timeout": float, "max_retries": int, "backoff": float, "model": str}  # OpenAIModel's
MAX_EPISODES = 100_000  # a grid larger than this is a typo (count: 100000000), not an experiment
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
    if not path.is_file():
        shipped = shipped_configs()
        if str(name_or_path) not in shipped:
            raise ConfigError(f"no experiment config {str(name_or_path)!r}: not a file, and not one of the "
                              f"shipped configs {sorted(shipped)}")
        path = shipped[str(name_or_path)]
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # a SafeLoader
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc}") from exc
    return parse_config(data, source=str(path))


class _UniqueKeyLoader(yaml.SafeLoader):
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
        raise ConfigError(f"{source}: unknown keys {sorted(unknown)}; allowed: name, description, envs, "
                          "variants, seeds, agent")
    for key in ("name", "envs", "variants", "seeds"):
        if key not in data:
            raise ConfigError(f"{source}: missing key {key!r}")
    variants = data["variants"]
    if not isinstance(variants, list) or not variants:
        raise ConfigError(f"{source}: 'variants' must be a non-empty list")
    from servicerobot.experiments.cm import CM_VARIANTS

    known = (*VARIANTS, *(v + "-noverify" for v in VARIANTS), *_VARIANTS_EXTRA, *CM_VARIANTS)
    for v in variants:
        if v not in known:
            raise ConfigError(f"{source}: unknown variant {v!r}; choose from {', '.join(known)}")
    repeated = sorted({v for v in variants if variants.count(v) > 1})
    if repeated:
        raise ConfigError(f"{source}: variants {repeated} are listed more than once (each episode key "
                          "config/env/variant/seed must be unique): list each variant once")
    agent = data.get("agent") or {}
    if not isinstance(agent, dict) or set(agent) - set(AGENT_OPTIONS):
        raise ConfigError(f"{source}: 'agent' must be a mapping with keys among {AGENT_OPTIONS}")
    check_agent(agent, source)
    envs = []
    for i, e in enumerate(data["envs"] or []):
        if not isinstance(e, dict) or "name" not in e:
            raise ConfigError(f"{source}: envs[{i}] must be a mapping with a 'name' (and optional 'kwargs', 'id')")
        kwargs = e.get("kwargs") or {}
        if not isinstance(kwargs, dict):
            raise ConfigError(f"{source}: envs[{i}].kwargs must be a mapping of gym.make keyword arguments")
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
    if isinstance(value, dict) and set(value) <= {"start", "count"} and "count" in value:
        start, count = value.get("start", 0), value["count"]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, count)) or count < 1:
            raise ConfigError(f"{source}: 'seeds' {{start: S, count: N}} needs integers and N >= 1, got {value!r}")
        seeds: Sequence[int] = range(start, start + count)
    elif isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        seeds = tuple(value)
        repeated = sorted({s for s in seeds if seeds.count(s) > 1}) if len(set(seeds)) < len(seeds) else []
        if repeated:
            raise ConfigError(f"{source}: seeds {repeated[:10]} are listed more than once (each episode key "
                              "must be unique): list each seed once")
    else:
        raise ConfigError(f"{source}: 'seeds' must be a list of integers or {{start: S, count: N}}, got {value!r}")
    if len(seeds) > most:
        raise ConfigError(f"{source}: {len(seeds):,} seeds make more than {MAX_EPISODES:,} episodes with these "
                          f"envs and variants (at most {most:,} seeds here); split the grid into several configs")
    return seeds


def check_agent(agent: dict, source: str) -> None:
    """Agent options: types and ranges, the interpreter's name, the language model's request limits."""
    timeout = agent.get("planner_timeout", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ConfigError(f"{source}: agent.planner_timeout must be a positive number of seconds, got {timeout!r}")
    attempts = agent.get("max_attempts", 3)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ConfigError(f"{source}: agent.max_attempts must be an integer >= 1, got {attempts!r}")
    for flag, default in (("fallback_to_full", True), ("relax", False)):
        if not isinstance(agent.get(flag, default), bool):
            raise ConfigError(f"{source}: agent.{flag} must be true or false, got {agent[flag]!r}")
    if agent.get("interpreter", "default") not in INTERPRETERS:
        raise ConfigError(f"{source}: agent.interpreter must be one of {', '.join(INTERPRETERS)}, "
                          f"got {agent['interpreter']!r}")
    llm = agent.get("llm", {})
    if not isinstance(llm, dict) or set(llm) - set(LLM_OPTIONS):
        raise ConfigError(f"{source}: agent.llm must be a mapping with keys among {sorted(LLM_OPTIONS)}, got {llm!r}")
    for key, value in llm.items():
        kind = LLM_OPTIONS[key]
        if kind is str:
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{source}: agent.llm.{key} must be a model name, got {value!r}")
            continue
        number = isinstance(value, (int, float) if kind is float else int) and not isinstance(value, bool)
        if not number or value < 0 or (key == "timeout" and value == 0):
            wanted = "a number of seconds > 0" if key == "timeout" else f"a {kind.__name__} >= 0"
            raise ConfigError(f"{source}: agent.llm.{key} must be {wanted}, got {value!r}")


def _check_env(env: EnvConfig, where: str) -> None:
    """Build the env once: its constructor checks every option (and names a wrong one)."""
    import gymnasium as gym

    import servicerobot  # noqa: F401  (registers the ids)
    from servicerobot.experiments.cm import CM_ENV_ID, check_cm_env

    if env.env_id == CM_ENV_ID:  # Context Matters instances, not a Gymnasium env
        try:
            check_cm_env(env)
        except Exception as exc:  # noqa: BLE001 - any failure means the kwargs are wrong
            raise ConfigError(f"{where}: {type(exc).__name__}: {exc}") from None
        return
    if env.env_id not in gym.registry:
        known = sorted(k for k in gym.registry if k.startswith("ServiceRobot"))
        raise ConfigError(f"{where}: unknown env id {env.env_id!r}; choose from {[*known, CM_ENV_ID]}")
    try:
        made = gym.make(env.env_id, **env.kwargs)
    except Exception as exc:  # noqa: BLE001 - any constructor failure means the kwargs are wrong
        raise ConfigError(f"{where}: the env rejects its kwargs {env.kwargs}: {type(exc).__name__}: {exc}") from None
    made.close()
