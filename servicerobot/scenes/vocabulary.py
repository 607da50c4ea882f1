"""Words the household generator draws from: room kinds, fixtures, item kinds, names and attributes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COLOURS",
    "EXTRA_ROOMS",
    "FIXTURE_KINDS",
    "ITEM_KINDS",
    "MARKS",
    "PEOPLE_NAMES",
    "ROOM_FIXTURES",
    "ROOM_SEQUENCE",
    "FixtureKind",
    "ItemKind",
]


@dataclass(frozen=True)
class FixtureKind:
    """A kind of fixture: its PDDL type, the noun people use, and whether it starts closed."""

    noun: str
    pddl_type: str
    starts_closed: bool = True


@dataclass(frozen=True)
class ItemKind:
    """A kind of movable item: PDDL type, noun, materials, and the fixture nouns where it is kept."""

    noun: str
    pddl_type: str
    materials: tuple[str, ...]
    homes: tuple[str, ...]
    ownable: bool = False
    coloured: bool = True
    perishable: bool = False
    fragile: bool = False


FIXTURE_KINDS: dict[str, FixtureKind] = {k.noun: k for k in [
    FixtureKind("light", "light"),
    FixtureKind("fridge", "fridge"),
    FixtureKind("kitchen sink", "sink"),
    FixtureKind("bathroom sink", "sink"),
    FixtureKind("counter", "surface"),
    FixtureKind("cabinet", "openable"),
    FixtureKind("trash can", "trashcan"),
    FixtureKind("sofa", "surface"),
    FixtureKind("coffee table", "surface"),
    FixtureKind("bookshelf", "shelf"),
    FixtureKind("tv stand", "surface"),
    FixtureKind("dining table", "surface"),
    FixtureKind("sideboard", "openable"),
    FixtureKind("hamper", "container"),
    FixtureKind("bed", "bed"),
    FixtureKind("wardrobe", "openable"),
    FixtureKind("nightstand", "surface"),
    FixtureKind("washer", "washer"),
    FixtureKind("dryer", "dryer"),
    FixtureKind("laundry basket", "container"),
    FixtureKind("storage shelf", "shelf"),
    FixtureKind("desk", "surface"),
    FixtureKind("shoe rack", "shelf"),
    FixtureKind("console table", "surface"),
    FixtureKind("toy box", "container"),
    FixtureKind("drawer", "openable"),
]}

# The fixtures of each kind of room, in the order they are laid along the walls.
ROOM_FIXTURES: dict[str, tuple[str, ...]] = {
    "hallway": ("light", "shoe rack", "console table"),
    "kitchen": ("light", "fridge", "kitchen sink", "counter", "cabinet", "trash can", "dining table"),
    "living room": ("light", "sofa", "coffee table", "bookshelf", "tv stand"),
    "bathroom": ("light", "bathroom sink", "cabinet", "hamper"),
    "laundry room": ("light", "washer", "dryer", "laundry basket", "storage shelf"),
    "bedroom": ("light", "bed", "wardrobe", "nightstand"),
    "dining room": ("light", "dining table", "sideboard", "trash can"),
    "study": ("light", "desk", "bookshelf", "trash can", "drawer"),
    "playroom": ("light", "toy box", "storage shelf", "coffee table"),
    "guest room": ("light", "bed", "wardrobe", "desk"),
    "office": ("light", "desk", "bookshelf", "drawer", "trash can"),
    "storage room": ("light", "storage shelf", "cabinet"),
}

# Room kinds in the order a house of n rooms takes them; past the end, EXTRA_ROOMS cycle.
ROOM_SEQUENCE: tuple[str, ...] = ("hallway", "kitchen", "living room", "bathroom", "laundry room", "bedroom",
                                  "dining room", "study", "bedroom", "bedroom")
EXTRA_ROOMS: tuple[str, ...] = ("bedroom", "bathroom", "playroom", "guest room", "office", "storage room",
                                "kitchen", "living room", "bedroom", "study")

_DISH_HOMES = ("cabinet", "counter", "kitchen sink", "dining table", "sideboard")
_FOOD_HOMES = ("cabinet", "counter")
_CLOTH_HOMES = ("wardrobe", "hamper", "laundry basket", "bed", "drawer")
_BOOK_HOMES = ("bookshelf", "desk", "nightstand", "coffee table", "storage shelf")
_GADGET_HOMES = ("coffee table", "desk", "nightstand", "tv stand", "console table", "counter", "drawer")
_DECOR_HOMES = ("bookshelf", "console table", "sideboard", "storage shelf", "coffee table", "toy box",
                "shoe rack")

ITEM_KINDS: tuple[ItemKind, ...] = (
    ItemKind("mug", "dish", ("ceramic",), _DISH_HOMES, ownable=True, fragile=True),
    ItemKind("plate", "dish", ("ceramic", "porcelain"), _DISH_HOMES, fragile=True),
    ItemKind("bowl", "dish", ("ceramic", "glass", "wooden"), _DISH_HOMES, fragile=True),
    ItemKind("glass", "dish", ("glass",), _DISH_HOMES, coloured=False, fragile=True),
    ItemKind("cup", "dish", ("plastic", "ceramic"), _DISH_HOMES, ownable=True),
    ItemKind("frying pan", "dish", ("steel", "cast-iron"), ("cabinet", "counter", "kitchen sink"),
             coloured=False),
    ItemKind("pot", "dish", ("steel",), ("cabinet", "counter", "kitchen sink"), coloured=False),
    ItemKind("milk", "food", ("carton",), ("fridge",), coloured=False, perishable=True),
    ItemKind("cheese", "food", ("cheddar", "gouda"), ("fridge",), coloured=False, perishable=True),
    ItemKind("yogurt", "food", ("cup",), ("fridge",), coloured=False, perishable=True),
    ItemKind("butter", "food", ("block",), ("fridge",), coloured=False, perishable=True),
    ItemKind("juice", "food", ("bottle",), ("fridge",), coloured=False, perishable=True),
    ItemKind("apple", "food", ("fruit",), ("counter", "fridge", "dining table"), perishable=False),
    ItemKind("bread", "food", ("loaf",), _FOOD_HOMES, coloured=False),
    ItemKind("cereal", "food", ("box",), _FOOD_HOMES, coloured=False),
    ItemKind("pasta", "food", ("bag",), _FOOD_HOMES, coloured=False),
    ItemKind("shirt", "clothing", ("cotton", "linen"), _CLOTH_HOMES, ownable=True),
    ItemKind("sweater", "clothing", ("wool", "cotton"), _CLOTH_HOMES, ownable=True),
    ItemKind("pair of socks", "clothing", ("cotton", "wool"), _CLOTH_HOMES, ownable=True),
    ItemKind("towel", "clothing", ("cotton",), ("hamper", "laundry basket", "cabinet", "storage shelf")),
    ItemKind("pair of jeans", "clothing", ("denim",), _CLOTH_HOMES, ownable=True),
    ItemKind("book", "book", ("paperback", "hardcover"), _BOOK_HOMES, ownable=True),
    ItemKind("notebook", "book", ("paper",), _BOOK_HOMES, ownable=True),
    ItemKind("magazine", "book", ("paper",), _BOOK_HOMES + ("sofa",)),
    ItemKind("phone", "gadget", ("plastic",), _GADGET_HOMES, ownable=True, fragile=True),
    ItemKind("remote", "gadget", ("plastic",), ("coffee table", "tv stand", "sofa"), coloured=False),
    ItemKind("laptop", "gadget", ("aluminium",), ("desk", "coffee table", "nightstand"), ownable=True,
             fragile=True),
    ItemKind("pair of headphones", "gadget", ("plastic",), _GADGET_HOMES, ownable=True),
    ItemKind("charger", "gadget", ("plastic",), _GADGET_HOMES, coloured=False),
    ItemKind("vase", "decor", ("glass", "ceramic"), _DECOR_HOMES, fragile=True),
    ItemKind("candle", "decor", ("wax",), _DECOR_HOMES),
    ItemKind("picture frame", "decor", ("wooden", "metal"), _DECOR_HOMES, fragile=True),
    ItemKind("teddy bear", "decor", ("plush",), ("toy box", "bed", "sofa", "storage shelf"), ownable=True),
    ItemKind("board game", "decor", ("cardboard",), ("toy box", "storage shelf", "bookshelf")),
)

# Adjectives that tell otherwise identical items apart ("the small frying pan", "the opened milk").
MARKS: tuple[str, ...] = ("big", "small", "old", "new", "spare", "opened", "favourite", "second", "large",
                          "little", "heavy", "light-weight")
COLOURS: tuple[str, ...] = ("red", "blue", "green", "yellow", "black", "white", "grey", "orange", "purple",
                            "pink", "brown", "teal")

PEOPLE_NAMES: tuple[str, ...] = (
    "Ana", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kira", "Luca",
    "Maya", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Viktor", "Wen", "Ximena",
    "Yusuf", "Zoe", "Amara", "Bruno", "Carmen", "Dmitri", "Esther", "Felix", "Gita", "Hugo", "Ivy", "Jonas",
    "Keiko", "Leon", "Mina", "Nora",
)
