"""The PyBullet world: a seeded multi-room apartment in real physics (DIRECT mode, CPU), TAMP skills.

`pybullet` is imported only when a world is built; importing this package needs nothing optional.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PRESETS", "CollisionChecker", "Layout", "LayoutConfig", "PyBulletOptions", "PyBulletWorld",
           "build_tamp_map", "generate_layout", "tamp_world_domain"]

_WHERE = {
    "PRESETS": "layout", "Layout": "layout", "LayoutConfig": "layout", "build_tamp_map": "layout",
    "generate_layout": "layout", "CollisionChecker": "collision", "PyBulletOptions": "world",
    "PyBulletWorld": "world", "tamp_world_domain": "world",
}


def __getattr__(name: str) -> Any:
    # Lazy, so that `servicerobot.adapters.pybullet` can import the layout without a cycle through the world.
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"servicerobot.envs.pybullet.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'servicerobot.envs.pybullet' has no attribute {name!r}")
