"""The 3D scene-graph vocabulary: Gibson room categories, object classes, and their household PDDL types.

The class tables live in `servicerobot.scenes.class_table` (re-exported here); `class_type` types a class by
them and, outside them, by `servicerobot.scenes.open_vocab.type_class`. Class names are normalised with
`class_key` ("dining table" -> "dining_table"): Stanford's 3DSG writes COCO classes with spaces, Context
Matters' labels turn the spaces into "_".
"""

from __future__ import annotations

from dataclasses import dataclass

from servicerobot.scenes.class_table import (
    CLASS_TO_TYPE,
    EXCLUDED,
    FIXTURE_TYPES,
    GENERATED_CLASSES,
    ITEM_TYPES,
    PERISHABLE,
    ClassInfo,
    class_key,
)
from servicerobot.scenes.open_vocab import type_class

__all__ = [
    "CLASS_TO_TYPE",
    "EXCLUDED",
    "FIXTURE_TYPES",
    "GENERATED_CLASSES",
    "ITEM_TYPES",
    "PERISHABLE",
    "RECEPTACLE_ITEMS",
    "ROOM_CATEGORIES",
    "ClassInfo",
    "RoomCategory",
    "class_key",
    "class_type",
]


def class_type(class_: str) -> str | None:
    """The household type of a 3DSG class, or None when the class is excluded or cannot be typed.

    Classes outside the table are typed by their words or by similarity to the known classes
    (`servicerobot.scenes.open_vocab.type_class`, which says how each one was decided).
    """
    key = class_key(class_) if isinstance(class_, str) else ""
    if key in CLASS_TO_TYPE:
        return CLASS_TO_TYPE[key]
    return type_class(class_).pddl_type


@dataclass(frozen=True)
class RoomCategory:
    """A Gibson room category: floor area range (m^2) and the furniture it holds (class, probability)."""

    area: tuple[float, float]
    furniture: tuple[tuple[str, float], ...]


ROOM_CATEGORIES: dict[str, RoomCategory] = {
    "kitchen": RoomCategory((9, 16), (("refrigerator", 1), ("sink", 1), ("counter", 1), ("cabinet", 1),
                                     ("oven", 0.6), ("trash_can", 0.9), ("dining_table", 0.4), ("lamp", 0.5))),
    "dining_room": RoomCategory((10, 18), (("dining_table", 1), ("chair", 1), ("chair", 1), ("cabinet", 0.8),
                                         ("lamp", 0.7), ("potted_plant", 0.4))),
    "living_room": RoomCategory((16, 30), (("sofa", 1), ("coffee_table", 1), ("tv_stand", 0.9), ("tv", 0.9),
                                         ("bookshelf", 0.8), ("lamp", 0.8), ("potted_plant", 0.5))),
    "bedroom": RoomCategory((10, 18), (("bed", 1), ("nightstand", 1), ("wardrobe", 0.9), ("lamp", 0.7),
                                     ("basket", 0.3))),
    "bathroom": RoomCategory((4, 8), (("sink", 1), ("toilet", 1), ("cabinet", 0.7), ("basket", 0.6))),
    "corridor": RoomCategory((5, 10), (("shelf", 0.7), ("bench", 0.5), ("lamp", 0.6))),
    "home_office": RoomCategory((8, 14), (("desk", 1), ("chair", 1), ("bookshelf", 0.8),
                                        ("chest_of_drawers", 0.6), ("trash_can", 0.7), ("lamp", 0.8))),
    "utility_room": RoomCategory((5, 9), (("washing_machine", 1), ("dryer", 1), ("basket", 1), ("shelf", 0.7))),
    "childs_room": RoomCategory((8, 14), (("bed", 1), ("shelf", 1), ("basket", 0.8), ("desk", 0.5))),
    "storage_room": RoomCategory((4, 8), (("shelf", 1), ("cabinet", 0.8))),
    "television_room": RoomCategory((10, 18), (("sofa", 1), ("tv_stand", 1), ("tv", 1), ("coffee_table", 0.8))),
}

# What a receptacle class holds, and whether items go on it or inside it.
RECEPTACLE_ITEMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "refrigerator": ("inside", ("milk", "cheese", "apple", "orange", "sandwich", "broccoli", "carrot", "cake",
                                "bottle")),
    "sink": ("inside", ("plate", "bowl", "cup", "fork", "knife", "spoon", "pot")),
    "bathroom/sink": ("inside", ("toothbrush", "cup")),
    "bathroom/cabinet": ("inside", ("towel", "toothbrush", "hair_drier")),
    "counter": ("on", ("plate", "bowl", "cup", "bread", "banana", "apple", "bottle", "knife", "pan", "cereal")),
    "cabinet": ("inside", ("plate", "bowl", "cup", "wine_glass", "pot", "pan", "cereal")),
    "oven": ("inside", ("pan", "pot")),
    "dining_table": ("on", ("plate", "bowl", "cup", "fork", "knife", "spoon", "wine_glass", "apple", "vase",
                            "bottle")),
    "sofa": ("on", ("remote", "book", "teddy_bear", "cell_phone")),
    "coffee_table": ("on", ("remote", "book", "cup", "laptop", "vase", "notebook")),
    "tv_stand": ("on", ("remote", "clock", "vase", "picture_frame")),
    "bookshelf": ("on", ("book", "clock", "vase", "picture_frame", "notebook")),
    "bed": ("on", ("shirt", "towel", "teddy_bear", "book", "sweater")),
    "nightstand": ("on", ("book", "cell_phone", "clock", "cup", "notebook")),
    "wardrobe": ("inside", ("shirt", "sweater", "sock", "towel")),
    "basket": ("inside", ("shirt", "sock", "towel", "sweater", "sports_ball")),
    "shelf": ("on", ("book", "clock", "vase", "sports_ball", "towel", "picture_frame")),
    "bench": ("on", ("umbrella", "book", "sweater")),
    "desk": ("on", ("laptop", "keyboard", "mouse", "book", "notebook", "cell_phone", "cup", "scissors")),
    "chest_of_drawers": ("inside", ("shirt", "sock", "scissors", "notebook")),
    "washing_machine": ("inside", ("shirt", "sock", "towel")),
    "dryer": ("inside", ("towel", "sock")),
    "trash_can": ("inside", ()),
}
