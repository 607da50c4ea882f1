"""The 3D scene-graph vocabulary: Gibson room categories, object classes, and their household PDDL types.

Class names are normalised with `class_key` ("dining table" -> "dining_table"): Stanford's 3DSG writes COCO
classes with spaces, Context Matters' labels turn the spaces into "_".
"""

from __future__ import annotations

from dataclasses import dataclass

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

FIXTURE_TYPES = frozenset({"surface", "container", "light", "trashcan", "bed", "shelf", "sink", "openable",
                           "fridge", "washer", "dryer"})
ITEM_TYPES = frozenset({"dish", "food", "clothing", "book", "gadget", "decor"})


def class_key(class_: str) -> str:
    """The table key of a 3DSG class: lower case, spaces and hyphens as "_"."""
    return "_".join(class_.strip().lower().replace("-", " ").split())


@dataclass(frozen=True)
class ClassInfo:
    """What the generator knows of a class: box size (x, y, z metres), affordances, materials."""

    size: tuple[float, float, float]
    affordance: tuple[str, ...]
    materials: tuple[str, ...]


_F = ClassInfo
# Furniture and appliances (receptacles and fixtures) the generator places along walls.
_FURNITURE: dict[str, ClassInfo] = {
    "refrigerator": _F((0.8, 0.7, 1.8), ("open", "close", "cool"), ("metal", "plastic")),
    "sink": _F((0.8, 0.6, 0.9), ("wash", "turn on", "turn off"), ("ceramic", "steel")),
    "counter": _F((1.6, 0.6, 0.9), ("place on", "cut on"), ("granite", "wood")),
    "cabinet": _F((1.0, 0.5, 0.9), ("open", "close", "store"), ("wood",)),
    "oven": _F((0.6, 0.6, 0.9), ("open", "close", "cook"), ("metal",)),
    "dining_table": _F((1.4, 0.9, 0.75), ("place on", "eat at"), ("wood", "glass")),
    "chair": _F((0.45, 0.45, 0.9), ("sit on", "move"), ("wood", "plastic")),
    "trash_can": _F((0.35, 0.35, 0.5), ("throw in",), ("plastic", "metal")),
    "sofa": _F((2.0, 0.9, 0.8), ("sit on", "lie on", "place on"), ("fabric", "leather")),
    "coffee_table": _F((1.0, 0.6, 0.45), ("place on",), ("wood", "glass")),
    "tv_stand": _F((1.5, 0.45, 0.5), ("place on",), ("wood",)),
    "tv": _F((1.1, 0.1, 0.65), ("turn on", "turn off", "look at"), ("plastic", "glass")),
    "bookshelf": _F((0.9, 0.35, 1.1), ("place on", "store"), ("wood",)),
    "lamp": _F((0.4, 0.4, 1.5), ("turn on", "turn off"), ("metal", "fabric")),
    "potted_plant": _F((0.4, 0.4, 0.9), ("water", "move"), ("ceramic", "organic")),
    "bed": _F((1.6, 2.0, 0.55), ("lie on", "make", "place on"), ("wood", "fabric")),
    "nightstand": _F((0.5, 0.4, 0.55), ("place on", "open"), ("wood",)),
    "wardrobe": _F((1.2, 0.6, 2.0), ("open", "close", "store"), ("wood",)),
    "toilet": _F((0.4, 0.65, 0.75), ("flush", "sit on"), ("ceramic",)),
    "basket": _F((0.45, 0.45, 0.4), ("store", "carry"), ("wicker", "plastic")),
    "shelf": _F((1.0, 0.35, 1.0), ("place on", "store"), ("wood", "metal")),
    "bench": _F((1.2, 0.4, 0.45), ("sit on", "place on"), ("wood",)),
    "desk": _F((1.4, 0.7, 0.75), ("place on", "work at"), ("wood",)),
    "chest_of_drawers": _F((1.0, 0.5, 0.9), ("open", "close", "store"), ("wood",)),
    "washing_machine": _F((0.6, 0.6, 0.85), ("open", "close", "wash"), ("metal", "plastic")),
    "dryer": _F((0.6, 0.6, 0.85), ("open", "close", "dry"), ("metal", "plastic")),
}

_I = ClassInfo
# Small movable things the generator puts on or into receptacles.
_ITEMS: dict[str, ClassInfo] = {
    "plate": _I((0.25, 0.25, 0.03), ("pick up", "wash", "place"), ("ceramic", "porcelain")),
    "bowl": _I((0.16, 0.16, 0.07), ("pick up", "wash", "fill"), ("ceramic", "glass")),
    "cup": _I((0.09, 0.09, 0.1), ("pick up", "wash", "drink from"), ("ceramic", "plastic")),
    "wine_glass": _I((0.08, 0.08, 0.2), ("pick up", "wash", "drink from"), ("glass",)),
    "fork": _I((0.2, 0.03, 0.02), ("pick up", "wash", "eat with"), ("steel",)),
    "knife": _I((0.22, 0.03, 0.02), ("pick up", "wash", "cut with"), ("steel",)),
    "spoon": _I((0.18, 0.04, 0.02), ("pick up", "wash", "eat with"), ("steel",)),
    "pot": _I((0.25, 0.25, 0.18), ("pick up", "wash", "cook in"), ("steel",)),
    "pan": _I((0.3, 0.3, 0.06), ("pick up", "wash", "cook in"), ("steel", "cast iron")),
    "bottle": _I((0.08, 0.08, 0.28), ("pick up", "drink from", "pour"), ("glass", "plastic")),
    "apple": _I((0.08, 0.08, 0.08), ("pick up", "eat"), ("organic",)),
    "banana": _I((0.2, 0.05, 0.05), ("pick up", "eat", "peel"), ("organic",)),
    "orange": _I((0.08, 0.08, 0.08), ("pick up", "eat", "peel"), ("organic",)),
    "sandwich": _I((0.12, 0.1, 0.05), ("pick up", "eat"), ("organic",)),
    "broccoli": _I((0.15, 0.15, 0.12), ("pick up", "cook", "eat"), ("organic",)),
    "carrot": _I((0.18, 0.04, 0.04), ("pick up", "cook", "eat"), ("organic",)),
    "cake": _I((0.22, 0.22, 0.1), ("pick up", "cut", "eat"), ("organic",)),
    "milk": _I((0.08, 0.08, 0.24), ("pick up", "pour", "drink"), ("carton",)),
    "cheese": _I((0.12, 0.08, 0.06), ("pick up", "cut", "eat"), ("organic",)),
    "bread": _I((0.25, 0.12, 0.1), ("pick up", "cut", "eat"), ("organic",)),
    "cereal": _I((0.2, 0.07, 0.28), ("pick up", "pour", "eat"), ("cardboard",)),
    "remote": _I((0.18, 0.05, 0.03), ("pick up", "press"), ("plastic",)),
    "laptop": _I((0.34, 0.24, 0.03), ("pick up", "open", "type on"), ("aluminium", "plastic")),
    "cell_phone": _I((0.15, 0.07, 0.01), ("pick up", "call", "charge"), ("plastic", "glass")),
    "keyboard": _I((0.44, 0.14, 0.03), ("pick up", "type on"), ("plastic",)),
    "mouse": _I((0.11, 0.06, 0.04), ("pick up", "click"), ("plastic",)),
    "book": _I((0.22, 0.15, 0.04), ("pick up", "read", "place"), ("paper",)),
    "notebook": _I((0.21, 0.15, 0.02), ("pick up", "read", "write in"), ("paper",)),
    "clock": _I((0.2, 0.06, 0.2), ("pick up", "look at"), ("plastic", "wood")),
    "vase": _I((0.14, 0.14, 0.28), ("pick up", "fill"), ("glass", "ceramic")),
    "teddy_bear": _I((0.25, 0.18, 0.3), ("pick up", "hug"), ("plush",)),
    "picture_frame": _I((0.2, 0.04, 0.25), ("pick up", "hang"), ("wood", "metal")),
    "shirt": _I((0.3, 0.25, 0.04), ("pick up", "wear", "wash", "fold"), ("cotton", "linen")),
    "sweater": _I((0.3, 0.25, 0.06), ("pick up", "wear", "wash", "fold"), ("wool", "cotton")),
    "sock": _I((0.15, 0.08, 0.03), ("pick up", "wear", "wash"), ("cotton", "wool")),
    "towel": _I((0.35, 0.25, 0.05), ("pick up", "wash", "dry with", "fold"), ("cotton",)),
    "toothbrush": _I((0.19, 0.02, 0.02), ("pick up", "brush with"), ("plastic",)),
    "hair_drier": _I((0.25, 0.09, 0.22), ("pick up", "turn on", "dry with"), ("plastic",)),
    "scissors": _I((0.18, 0.07, 0.02), ("pick up", "cut with"), ("steel", "plastic")),
    "sports_ball": _I((0.22, 0.22, 0.22), ("pick up", "throw", "kick"), ("rubber", "leather")),
    "umbrella": _I((0.9, 0.08, 0.08), ("pick up", "open", "close"), ("fabric", "metal")),
}

GENERATED_CLASSES: dict[str, ClassInfo] = {**_FURNITURE, **_ITEMS}

PERISHABLE = frozenset({"sandwich", "broccoli", "carrot", "cake", "milk", "cheese", "pizza", "hot_dog",
                        "donut", "yogurt", "butter", "juice", "meat", "fish", "egg"})

# Every class the project knows -> household PDDL type. Gibson's 3DSG object classes are COCO's
# (plus CM's added task objects), so the table covers COCO's indoor vocabulary too.
CLASS_TO_TYPE: dict[str, str] = {
    # fixtures
    "refrigerator": "fridge", "fridge": "fridge",
    "sink": "sink", "kitchen_sink": "sink", "bathroom_sink": "sink",
    "counter": "surface", "countertop": "surface", "kitchen_counter": "surface",
    "dining_table": "surface", "table": "surface", "coffee_table": "surface", "side_table": "surface",
    "desk": "surface", "tv_stand": "surface", "console_table": "surface", "nightstand": "surface",
    "sofa": "surface", "couch": "surface", "bench": "surface", "ottoman": "surface", "stool": "surface",
    "bookshelf": "shelf", "bookcase": "shelf", "shelf": "shelf", "shoe_rack": "shelf", "storage_shelf": "shelf",
    "bed": "bed",
    "cabinet": "openable", "cupboard": "openable", "wardrobe": "openable", "closet": "openable",
    "chest_of_drawers": "openable", "drawer": "openable", "dresser": "openable", "sideboard": "openable",
    "oven": "openable", "microwave": "openable", "dishwasher": "openable", "suitcase": "openable",
    "basket": "container", "laundry_basket": "container", "hamper": "container", "toy_box": "container",
    "box": "container", "bucket": "container",
    "trash_can": "trashcan", "trashcan": "trashcan", "garbage_bin": "trashcan", "bin": "trashcan",
    "washing_machine": "washer", "washer": "washer",
    "dryer": "dryer", "clothes_dryer": "dryer",
    "lamp": "light", "floor_lamp": "light", "table_lamp": "light", "light": "light",
    # dishes
    "plate": "dish", "bowl": "dish", "cup": "dish", "mug": "dish", "wine_glass": "dish", "glass": "dish",
    "fork": "dish", "knife": "dish", "spoon": "dish", "pot": "dish", "pan": "dish", "frying_pan": "dish",
    "bottle": "dish", "kettle": "dish", "tray": "dish",
    # food
    "apple": "food", "banana": "food", "orange": "food", "sandwich": "food", "broccoli": "food",
    "carrot": "food", "hot_dog": "food", "pizza": "food", "donut": "food", "cake": "food", "milk": "food",
    "cheese": "food", "bread": "food", "cereal": "food", "pasta": "food", "yogurt": "food", "butter": "food",
    "juice": "food", "egg": "food", "meat": "food", "fish": "food",
    # clothing and textiles
    "shirt": "clothing", "sweater": "clothing", "sock": "clothing", "jeans": "clothing", "towel": "clothing",
    "tie": "clothing", "jacket": "clothing", "dress": "clothing", "pillow": "clothing", "blanket": "clothing",
    # reading
    "book": "book", "notebook": "book", "magazine": "book", "newspaper": "book",
    # gadgets and tools
    "laptop": "gadget", "cell_phone": "gadget", "phone": "gadget", "remote": "gadget", "keyboard": "gadget",
    "mouse": "gadget", "hair_drier": "gadget", "scissors": "gadget", "charger": "gadget",
    "headphones": "gadget", "monitor": "gadget", "computer": "gadget", "cpu": "gadget", "ram": "gadget",
    "motherboard": "gadget", "power_supply": "gadget", "graphics_card": "gadget", "mop": "gadget",
    "broom": "gadget", "detergent": "gadget", "soap": "gadget", "sponge": "gadget",
    # everything else one can carry
    "clock": "decor", "vase": "decor", "teddy_bear": "decor", "picture_frame": "decor", "candle": "decor",
    "toothbrush": "decor", "sports_ball": "decor", "frisbee": "decor", "kite": "decor",
    "baseball_bat": "decor", "baseball_glove": "decor", "tennis_racket": "decor", "umbrella": "decor",
    "skateboard": "decor", "board_game": "decor", "toy": "decor", "pen": "decor", "pencil": "decor",
}

# Classes known but deliberately left out of the PDDL scene, with the reason (they still appear in the 3D
# scene and in habitat-sim, as obstacles and as semantic objects).
EXCLUDED: dict[str, str] = {
    "person": "people are the household world's own persons, not scene objects",
    "chair": "seating; the household domain never puts things on a chair",
    "toilet": "no household action uses a toilet",
    "tv": "a mounted appliance; too large to carry and no action uses it",
    "potted_plant": "too large to carry around and no action uses it",
    "toaster": "a countertop appliance no household action uses",
    "backpack": "a bag holds items, but domain items hold nothing",
    "handbag": "a bag holds items, but domain items hold nothing",
    "bicycle": "vehicle", "motorcycle": "vehicle", "car": "vehicle", "bus": "vehicle", "truck": "vehicle",
    "train": "vehicle", "airplane": "vehicle", "boat": "vehicle",
    "skis": "outdoor sports gear, not a household item", "snowboard": "outdoor sports gear, not a household item",
    "surfboard": "outdoor sports gear, not a household item",
    "traffic_light": "outdoor", "fire_hydrant": "outdoor", "stop_sign": "outdoor", "parking_meter": "outdoor",
    "bird": "animal", "cat": "animal", "dog": "animal", "horse": "animal", "sheep": "animal", "cow": "animal",
    "elephant": "animal", "bear": "animal", "zebra": "animal", "giraffe": "animal",
    "door": "part of the building", "window": "part of the building", "wall": "part of the building",
    "floor": "part of the building", "ceiling": "part of the building", "stairs": "part of the building",
}

for _name in GENERATED_CLASSES:  # every generated class is mapped or excluded (tests check it too)
    assert _name in CLASS_TO_TYPE or _name in EXCLUDED, _name


def class_type(class_: str) -> str | None:
    """The household type of a 3DSG class, or None when the class is excluded or cannot be typed.

    Classes outside the table are typed by their words or by similarity to the known classes
    (`servicerobot.scenes.open_vocab.type_class`, which says how each one was decided).
    """
    key = class_key(class_) if isinstance(class_, str) else ""
    if key in CLASS_TO_TYPE:
        return CLASS_TO_TYPE[key]
    from servicerobot.scenes.open_vocab import type_class

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
