"""Object profiles for Context Matters tasks: what each task object is (household type, affordances,
materials, a one-line description), as a 3D scene graph would record it.

The profiles serve two sides that must not share answers: the task generator writes them into the scene
(so equivalent objects look alike there, as in a real 3DSG), and the offline relaxer reads the profile of
a *missing* class as world knowledge ("what is a plate for?"). Which substitutions are acceptable is
ground truth and lives only in `servicerobot.envs.context_matters.tasks` (`EQUIVALENTS`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "ObjectProfile", "profile"]


@dataclass(frozen=True)
class ObjectProfile:
    """What a class of object is: its household PDDL type, affordances, materials and description."""

    class_: str
    pddl_type: str
    affordances: tuple[str, ...]
    materials: tuple[str, ...]
    description: str


def _p(class_: str, pddl_type: str, affordances: str, materials: str, description: str) -> ObjectProfile:
    return ObjectProfile(class_, pddl_type, tuple(a.strip() for a in affordances.split(",") if a.strip()),
                         tuple(m.strip() for m in materials.split(",") if m.strip()), description)


PROFILES: dict[str, ObjectProfile] = {p.class_: p for p in [
    # tableware
    _p("plate", "dish", "hold food, serve food, stack", "ceramic", "a flat round ceramic plate to serve a meal on"),
    _p("bowl", "dish", "hold food, serve food, stack", "ceramic", "a deep round ceramic bowl to serve a meal in"),
    _p("frying_pan", "dish", "cook food, hold food", "steel", "a heavy steel frying pan for cooking on a stove"),
    _p("fork", "dish", "eat food, pick food", "steel", "a steel fork with four tines for eating a meal"),
    _p("knife", "dish", "cut food, spread butter", "steel", "a steel table knife for cutting food"),
    _p("glass", "dish", "hold drink, drink from", "glass", "a clear drinking glass for water or juice"),
    _p("cup", "dish", "hold drink, drink from", "plastic", "a plastic cup to drink water or juice from"),
    _p("mug", "dish", "hold drink, drink from", "ceramic", "a ceramic mug to drink coffee or tea from"),
    _p("vase", "decor", "hold flowers, hold water", "glass", "a tall glass vase that holds a bunch of flowers"),
    # food
    _p("apple", "food", "eat", "fruit", "a fresh red apple, a fruit to eat"),
    _p("orange", "food", "eat, peel", "fruit", "a fresh orange, a citrus fruit to peel and eat"),
    # trash
    _p("bottle", "dish", "throw away, recycle", "plastic", "an empty plastic bottle, trash for the bin"),
    _p("newspaper", "book", "throw away, read", "paper", "an old crumpled newspaper, trash for the bin"),
    # office and computers
    _p("laptop", "gadget", "compute, type, display", "plastic, metal", "a portable laptop computer with a keyboard"),
    _p("cell_phone", "gadget", "call, display, touch", "glass, metal", "a smartphone to call people"),
    _p("scissors", "gadget", "cut paper", "steel", "a pair of steel scissors that cut paper"),
    _p("pen", "decor", "write, draw", "plastic", "a plastic ballpoint pen to write notes with"),
    _p("pencil", "decor", "write, draw", "wood", "a wooden pencil to write notes with"),
    _p("book", "book", "read", "paper", "a hardcover book to read"),
    _p("magazine", "book", "read, browse", "paper", "a glossy magazine with pictures"),
    _p("monitor", "gadget", "display", "plastic", "a computer monitor, the screen of a desktop computer"),
    _p("keyboard", "gadget", "type", "plastic", "a computer keyboard to type on"),
    _p("mouse", "gadget", "point, click", "plastic", "a computer mouse to point and click with"),
    _p("remote", "gadget", "press buttons, control tv", "plastic", "a tv remote control with buttons"),
    _p("computer", "gadget", "compute", "metal", "the tower case of a desktop computer"),
    # clothes
    _p("shirt", "clothing", "wear, wash", "cotton", "a cotton shirt"),
    _p("sweater", "clothing", "wear, wash", "wool", "a warm wool sweater"),
    _p("towel", "clothing", "dry, wash", "cotton", "a cotton bath towel"),
    # fixtures
    _p("dining_table", "surface", "place on, eat at", "wood", "a wooden dining table"),
    _p("desk", "surface", "place on, work at", "wood", "a wooden desk to work at"),
    _p("counter", "surface", "place on, prepare food", "stone", "a kitchen counter"),
    _p("coffee_table", "surface", "place on", "wood", "a low coffee table"),
    _p("bookshelf", "shelf", "place on, store books", "wood", "a bookshelf"),
    _p("chest_of_drawers", "openable", "open, close, store", "wood", "a chest of drawers"),
    _p("sink", "sink", "wash, fill water", "ceramic", "a sink with a faucet"),
    _p("trash_can", "trashcan", "throw away", "plastic", "a trash can"),
    _p("washing_machine", "washer", "wash clothes, open, close", "metal", "a washing machine"),
    _p("dryer", "dryer", "dry clothes, open, close", "metal", "a tumble dryer"),
    _p("refrigerator", "fridge", "cool food, open, close", "metal", "a refrigerator"),
]}
"""Every class a Context Matters task uses, by 3DSG class key (`gibson_classes.class_key`)."""


def profile(class_: str) -> ObjectProfile | None:
    """The profile of a class (None for a class no task uses)."""
    return PROFILES.get(class_)
