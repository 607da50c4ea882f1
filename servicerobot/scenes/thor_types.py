"""THOR object types -> the household PDDL vocabulary: the one table every AI2-THOR piece reads.

Every type in ALFWorld's `constants.OBJECTS` (plus the THOR 5 names seen in recorded metadata) is either a
fixture kind, an item kind, or listed in `EXCLUDED` with the reason it is left out. THOR's own object
flags (breakable, dirtyable, ...) come with each kind, so people only do to an object what THOR allows.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BREAKABLE", "DIRTYABLE", "EXCLUDED", "FIXTURES", "ITEMS", "THOR_ALIASES", "ThorFixture", "ThorItem",
           "canonical_type"]


@dataclass(frozen=True)
class ThorFixture:
    """A THOR receptacle or switch as a household fixture: PDDL type and the noun people use."""

    pddl_type: str
    noun: str
    size: tuple[float, float] = (0.6, 0.6)  # nominal footprint (x, z) in metres, for drawing and metadata


@dataclass(frozen=True)
class ThorItem:
    """A pickupable THOR object as a household item."""

    pddl_type: str
    noun: str
    material: str
    coloured: bool = False
    ownable: bool = False
    perishable: bool = False


FIXTURES: dict[str, ThorFixture] = {
    "CounterTop": ThorFixture("surface", "counter", (1.2, 0.6)),
    "DiningTable": ThorFixture("surface", "dining table", (1.4, 0.9)),
    "CoffeeTable": ThorFixture("surface", "coffee table", (1.0, 0.6)),
    "SideTable": ThorFixture("surface", "side table", (0.5, 0.5)),
    "Desk": ThorFixture("surface", "desk", (1.2, 0.6)),
    "TVStand": ThorFixture("surface", "tv stand", (1.2, 0.4)),
    "Sofa": ThorFixture("surface", "sofa", (1.8, 0.8)),
    "ArmChair": ThorFixture("surface", "armchair", (0.8, 0.8)),
    "Ottoman": ThorFixture("surface", "ottoman", (0.6, 0.6)),
    "Dresser": ThorFixture("surface", "dresser", (1.0, 0.5)),
    "Cart": ThorFixture("surface", "cart", (0.6, 0.4)),
    "StoveBurner": ThorFixture("surface", "stove burner", (0.3, 0.3)),
    "CoffeeMachine": ThorFixture("surface", "coffee machine", (0.3, 0.3)),
    "Toilet": ThorFixture("surface", "toilet", (0.5, 0.7)),
    "HandTowelHolder": ThorFixture("surface", "hand towel holder", (0.3, 0.1)),
    "TowelHolder": ThorFixture("surface", "towel holder", (0.6, 0.1)),
    "ToiletPaperHanger": ThorFixture("surface", "toilet paper hanger", (0.2, 0.1)),
    "Shelf": ThorFixture("shelf", "shelf", (0.8, 0.3)),
    "Bed": ThorFixture("bed", "bed", (1.6, 2.0)),
    "Cabinet": ThorFixture("openable", "cabinet", (0.5, 0.5)),
    "Drawer": ThorFixture("openable", "drawer", (0.5, 0.4)),
    "Microwave": ThorFixture("openable", "microwave", (0.5, 0.4)),
    "Safe": ThorFixture("openable", "safe", (0.5, 0.5)),
    "Fridge": ThorFixture("fridge", "fridge", (0.8, 0.8)),
    "SinkBasin": ThorFixture("sink", "sink", (0.6, 0.5)),
    "BathtubBasin": ThorFixture("container", "bathtub", (1.6, 0.8)),
    "LaundryHamper": ThorFixture("container", "laundry hamper", (0.5, 0.5)),
    "Toaster": ThorFixture("container", "toaster", (0.3, 0.2)),
    "GarbageCan": ThorFixture("trashcan", "trash can", (0.4, 0.4)),
    "LightSwitch": ThorFixture("light", "light", (0.1, 0.1)),
}

_DISH, _UTENSIL = "ceramic", "steel"
ITEMS: dict[str, ThorItem] = {
    "Bowl": ThorItem("dish", "bowl", _DISH, coloured=True),
    "Cup": ThorItem("dish", "cup", _DISH, coloured=True, ownable=True),
    "Mug": ThorItem("dish", "mug", _DISH, coloured=True, ownable=True),
    "Plate": ThorItem("dish", "plate", _DISH, coloured=True),
    "Pan": ThorItem("dish", "pan", "steel"),
    "Pot": ThorItem("dish", "pot", "steel"),
    "Kettle": ThorItem("dish", "kettle", "steel"),
    "Fork": ThorItem("dish", "fork", _UTENSIL),
    "Knife": ThorItem("dish", "knife", _UTENSIL),
    "ButterKnife": ThorItem("dish", "butter knife", _UTENSIL),
    "Spoon": ThorItem("dish", "spoon", _UTENSIL),
    "Spatula": ThorItem("dish", "spatula", "plastic"),
    "Ladle": ThorItem("dish", "ladle", _UTENSIL),
    "Apple": ThorItem("food", "apple", "fruit", perishable=True),
    "Bread": ThorItem("food", "bread", "loaf"),
    "Egg": ThorItem("food", "egg", "shell", perishable=True),
    "Lettuce": ThorItem("food", "lettuce", "vegetable", perishable=True),
    "Potato": ThorItem("food", "potato", "vegetable", perishable=True),
    "Tomato": ThorItem("food", "tomato", "vegetable", perishable=True),
    "WineBottle": ThorItem("food", "wine bottle", "glass"),
    "SaltShaker": ThorItem("food", "salt shaker", "glass"),
    "PepperShaker": ThorItem("food", "pepper shaker", "glass"),
    "Cloth": ThorItem("clothing", "cloth", "cotton", coloured=True),
    "HandTowel": ThorItem("clothing", "hand towel", "cotton", coloured=True),
    "Towel": ThorItem("clothing", "towel", "cotton", coloured=True),
    "Boots": ThorItem("clothing", "pair of boots", "leather", coloured=True, ownable=True),
    "Book": ThorItem("book", "book", "paper", coloured=True, ownable=True),
    "Newspaper": ThorItem("book", "newspaper", "paper"),
    "CellPhone": ThorItem("gadget", "phone", "plastic", coloured=True, ownable=True),
    "Laptop": ThorItem("gadget", "laptop", "aluminium", ownable=True),
    "RemoteControl": ThorItem("gadget", "remote", "plastic"),
    "AlarmClock": ThorItem("gadget", "alarm clock", "plastic", coloured=True),
    "Watch": ThorItem("gadget", "watch", "metal", ownable=True),
    "CD": ThorItem("gadget", "cd", "plastic"),
    "CreditCard": ThorItem("gadget", "credit card", "plastic", ownable=True),
    "KeyChain": ThorItem("gadget", "key chain", "metal", ownable=True),
    "Pen": ThorItem("gadget", "pen", "plastic", coloured=True),
    "Pencil": ThorItem("gadget", "pencil", "wood", coloured=True),
    "Vase": ThorItem("decor", "vase", "glass", coloured=True),
    "Statue": ThorItem("decor", "statue", "ceramic"),
    "Candle": ThorItem("decor", "candle", "wax", coloured=True),
    "TeddyBear": ThorItem("decor", "teddy bear", "plush", ownable=True),
    "Box": ThorItem("decor", "box", "cardboard"),
    "BasketBall": ThorItem("decor", "basketball", "rubber"),
    "BaseballBat": ThorItem("decor", "baseball bat", "wood"),
    "TennisRacket": ThorItem("decor", "tennis racket", "graphite"),
    "Pillow": ThorItem("decor", "pillow", "cotton", coloured=True),
    "Glassbottle": ThorItem("decor", "glass bottle", "glass"),
    "WateringCan": ThorItem("decor", "watering can", "plastic", coloured=True),
    "TissueBox": ThorItem("decor", "tissue box", "cardboard"),
    "PaperTowelRoll": ThorItem("decor", "paper towel roll", "paper"),
    "PaperTowel": ThorItem("decor", "paper towel", "paper"),
    "ToiletPaper": ThorItem("decor", "toilet paper", "paper"),
    "ToiletPaperRoll": ThorItem("decor", "toilet paper roll", "paper"),
    "SoapBar": ThorItem("decor", "soap bar", "soap"),
    "SoapBottle": ThorItem("decor", "soap bottle", "plastic"),
    "SprayBottle": ThorItem("decor", "spray bottle", "plastic"),
    "DishSponge": ThorItem("decor", "dish sponge", "sponge"),
    "ScrubBrush": ThorItem("decor", "scrub brush", "plastic"),
    "Plunger": ThorItem("decor", "plunger", "rubber"),
}

EXCLUDED: dict[str, str] = {
    "Floor": "the floor holds chairs and furniture, not items the robot moves",
    "Window": "part of the walls: neither a receptacle nor pickupable",
    "Blinds": "part of the walls: neither a receptacle nor pickupable",
    "Curtains": "part of the walls: neither a receptacle nor pickupable",
    "Mirror": "wall-mounted: breakable and dirtyable in THOR but never moved or thrown away",
    "Painting": "wall-mounted decoration, not a receptacle",
    "PaintingHanger": "wall-mounted, holds only paintings",
    "Poster": "wall-mounted decoration, not a receptacle",
    "ShowerDoor": "part of the shower: not a receptacle, never moved",
    "ShowerGlass": "part of the shower: not a receptacle, never moved",
    "ShowerCurtain": "part of the shower: not a receptacle, never moved",
    "ShowerHead": "part of the shower: not a receptacle, never moved",
    "Bathtub": "its BathtubBasin child is the receptacle",
    "Sink": "its SinkBasin child is the receptacle",
    "Faucet": "folded into its sink: the household domain's (faucet-on sink)",
    "StoveKnob": "cooking is not modelled (the knob only heats a burner)",
    "DeskLamp": "the domain's light is the room light (one per room, so 'the light in the X' is unambiguous)",
    "FloorLamp": "the domain's light is the room light (one per room, so 'the light in the X' is unambiguous)",
    "Lamp": "the domain's light is the room light (one per room, so 'the light in the X' is unambiguous)",
    "Chair": "not a receptacle in ALFWorld's receptacle table; only moved by people in THOR",
    "Footstool": "not a receptacle in ALFWorld's receptacle table and not pickupable",
    "HousePlant": "neither pickupable nor a receptacle",
    "Television": "neither pickupable nor a receptacle",
    "LaundryHamperLid": "part of the laundry hamper",
    "ShelvingUnit": "THOR 5 parent object; its Shelf children are the receptacles",
    "AppleSliced": "slicing is not modelled", "BreadSliced": "slicing is not modelled",
    "LettuceSliced": "slicing is not modelled", "PotatoSliced": "slicing is not modelled",
    "TomatoSliced": "slicing is not modelled", "EggCracked": "slicing is not modelled",
}

# Types whose THOR 5 name differs from ALFWorld's (THOR 2.1) name.
THOR_ALIASES: dict[str, str] = {"Bottle": "Glassbottle"}

# THOR's object-state flags that the household domain can express (THOR 5 object type tables).
BREAKABLE: frozenset[str] = frozenset({"Bottle", "Glassbottle", "Bowl", "CellPhone", "Cup", "Egg", "Laptop", "Mug",
                                       "Plate", "Statue", "Vase", "WineBottle"})
DIRTYABLE: frozenset[str] = frozenset({"Bowl", "Cup", "Mug", "Pan", "Plate", "Pot", "Cloth", "Bed"})


def canonical_type(object_type: str) -> str:
    """ALFWorld's name for a THOR object type (THOR 5's `Bottle` is ALFWorld's `Glassbottle`)."""
    return THOR_ALIASES.get(object_type, object_type)
