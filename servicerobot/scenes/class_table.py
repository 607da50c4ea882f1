"""The 3D scene-graph object classes: their household PDDL types (`CLASS_TO_TYPE`), the classes left out of the
PDDL scene (`EXCLUDED`), and what the generator knows of each class (`GENERATED_CLASSES`).

Class names are normalised with `class_key` ("dining table" -> "dining_table"): Stanford's 3DSG writes COCO
classes with spaces, Context Matters' labels turn the spaces into "_". Both `gibson_classes` (rooms, and
`class_type`) and `open_vocab` (classes outside these tables) read them.
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
    "ClassInfo",
    "class_key",
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
