"""Moved to `servicerobot.scenes.apartment` (a scene source: the adapter below the worlds reads it too); the
names the PyBullet world's modules import are kept here."""

from servicerobot.scenes.apartment import (
    COLOURS,
    INFLATION,
    LATTICE,
    PRESETS,
    ROBOT,
    ROBOT_HEIGHT,
    ROBOT_RADIUS,
    WALL_H,
    DoorSpec,
    FurnitureSpec,
    ItemSpec,
    Layout,
    LayoutConfig,
    RoomSpec,
    WallSpec,
    build_tamp_map,
    generate_layout,
    rect_distance,
    segment_rect_distance,
)

__all__ = [
    "COLOURS", "INFLATION", "LATTICE", "PRESETS", "ROBOT", "ROBOT_HEIGHT", "ROBOT_RADIUS", "WALL_H", "DoorSpec",
    "FurnitureSpec", "ItemSpec", "Layout", "LayoutConfig", "RoomSpec", "WallSpec", "build_tamp_map",
    "generate_layout", "rect_distance", "segment_rect_distance",
]
