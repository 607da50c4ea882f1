"""Experiment grids from YAML: environment configs x agent variants x seeds.

```yaml
name: smoke
seeds: {start: 0, count: 2}        # or a list: [0, 1, 5]
variants: [oracle, search-rag]
agent: {planner_timeout: 20}       # optional: ServiceAgent options shared by every variant
envs:
  - name: household-small
    kwargs: {size: small, n_tasks: 2, update_mode: verbal}
```

Shipped configs live in this package's `configs/` folder and are found by name (`load_config("smoke")`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from servicerobot.errors import ServiceRobotError

__all__ = ["AGENT_OPTIONS", "ConfigError", "EnvConfig", "EpisodeSpec", "ExperimentConfig", "load_config",
           "shipped_configs"]

# ServiceAgent options a config may set (see `servicerobot.experiments.episode.make_agent`).
AGENT_OPTIONS = ("planner_timeout", "max_attempts", "fallback_to_full", "interpreter")
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
    seeds: tuple[int, ...]
    agent: dict[str, Any]
    description: str = ""
    source: str = ""

    @property
    def hash(self) -> str:
        content = {"envs": [[e.name, e.env_id, e.kwargs] for e in self.envs], "variants": self.variants,
                   "seeds": self.seeds, "agent": self.agent}
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
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc}") from exc
    return parse_config(data, source=str(path))


def parse_config(data: Any, source: str = "<config>") -> ExperimentConfig:
    """Check and convert a config mapping (as loaded from YAML)."""
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
    agent = data.get("agent") or {}
    if not isinstance(agent, dict) or set(agent) - set(AGENT_OPTIONS):
        raise ConfigError(f"{source}: 'agent' must be a mapping with keys among {AGENT_OPTIONS}")
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
    return ExperimentConfig(str(data["name"]), tuple(envs), tuple(variants), _seeds(data["seeds"], source),
                            agent, str(data.get("description", "")), source)


def _seeds(value: Any, source: str) -> tuple[int, ...]:
    if isinstance(value, dict) and set(value) <= {"start", "count"} and "count" in value:
        return tuple(range(int(value.get("start", 0)), int(value.get("start", 0)) + int(value["count"])))
    if isinstance(value, list) and value and all(isinstance(s, int) for s in value):
        return tuple(value)
    raise ConfigError(f"{source}: 'seeds' must be a list of integers or {{start: S, count: N}}, got {value!r}")
