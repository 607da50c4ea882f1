"""How people in the household talk: noun phrases for entities, sentence templates for events and tasks, and
what each kind of sentence means.

Every sentence comes from one template table (`EVENT_TEMPLATES`, `TASK_TEMPLATES`), so tests can check
that a generated utterance matches one of the declared phrasings. Templates use `str.format` fields. What each
kind means (`EVENT_MEANINGS`, `TASK_MEANINGS`: the pattern forms of `servicerobot.envs.language`) is declared
beside them, and `LANGUAGE` joins the two: the rule interpreter is built from it.
"""

from __future__ import annotations

from dataclasses import replace
from string import Formatter

import numpy as np

from servicerobot.envs.language import Language, Phrasing
from servicerobot.scenes.household import HouseholdScene

__all__ = [
    "EVENT_MEANINGS",
    "EVENT_TEMPLATES",
    "LANGUAGE",
    "TASK_MEANINGS",
    "TASK_TEMPLATES",
    "Describer",
    "capitalize",
    "join_utterances",
    "render_template",
]

EVENT_TEMPLATES: dict[str, tuple[str, ...]] = {
    "move": (
        "I put {item} {prep} {dest}.",
        "I moved {item} from {src} to {dest}.",
        "Just so you know, {item} is {prep} {dest} now.",
        "Heads up: I left {item} {prep} {dest}.",
        "{actor} put {item} {prep} {dest}.",
    ),
    "move_partial": (
        "I took {item} from {src}.",
        "I moved {item} somewhere else, it's not {prep_src} {src} anymore.",
        "{item_cap} isn't {prep_src} {src} anymore.",
    ),
    "dirty": (
        "I used {item}, so it's dirty now.",
        "{item_cap} is dirty.",
        "Sorry, I got {item} dirty.",
        "{actor} used {item}; it needs a wash.",
    ),
    "clean": (
        "I washed {item}.",
        "{item_cap} is clean now.",
        "I cleaned {item} for you.",
    ),
    "break": (
        "Oops, I dropped {item} and it broke.",
        "{item_cap} is broken.",
        "I'm afraid {item} got broken.",
        "{actor} knocked over {item}, it's broken now.",
    ),
    "light_on": (
        "I turned on the light in {room}.",
        "I switched the light on in {room}.",
        "The light in {room} is on now.",
    ),
    "light_off": (
        "I turned off the light in {room}.",
        "I switched the light off in {room}.",
        "The light in {room} is off now.",
    ),
    "faucet_on": (
        "I left {sink} running.",
        "I turned on the faucet of {sink}.",
        "The water is running in {sink}.",
    ),
    "faucet_off": (
        "I turned off the faucet of {sink}.",
        "{sink_cap} isn't running anymore.",
    ),
    "open": (
        "I left {container} open.",
        "I opened {container}.",
        "{container_cap} is open.",
    ),
    "close": (
        "I closed {container}.",
        "{container_cap} is shut now.",
    ),
    "take": (
        "I'm taking {item}.",
        "I grabbed {item} from {src}.",
        "{actor} has {item} now.",
    ),
    "put_back": (
        "I put {item} {prep} {dest}.",
        "I'm done with {item}, I left it {prep} {dest}.",
    ),
    "unmake": (
        "I just took a nap, {bed} is unmade.",
        "{bed_cap} is messy now.",
        "Someone slept in {bed}, it needs making.",
    ),
    "warm": (
        "I took {item} out of the fridge and left it {prep} {dest}.",
        "{item_cap} is out of the fridge, {prep} {dest}.",
    ),
    "soil": (
        "I wore {item}, it needs washing.",
        "I spilled coffee on {item}.",
        "{item_cap} is dirty.",
    ),
    "go": (
        "I'm going to {room}.",
        "I'll be in {room}.",
        "{actor} went to {room}.",
    ),
}

TASK_TEMPLATES: dict[str, tuple[str, ...]] = {
    "pick_place": (
        "Could you put {item} {prep} {dest}?",
        "Please move {item} to {dest}.",
        "{item_cap} belongs {prep} {dest}, can you take it there?",
        "Put {item} {prep} {dest}, please.",
    ),
    "hand_over_me": (
        "Could you bring me {item}?",
        "I'd like {item}, please.",
        "Can you hand me {item}?",
    ),
    "hand_over": (
        "Please give {item} to {person}.",
        "{person} needs {item}, can you hand it over?",
        "Could you bring {item} to {person}?",
    ),
    "wash_dishes": (
        "Please wash the dishes.",
        "Could you do the dishes?",
        "The dirty dishes need washing.",
        "Can you clean all the dirty dishes?",
    ),
    "make_bed": (
        "Could you make {bed}?",
        "Please make the bed in {room}.",
        "{bed_cap} needs making.",
    ),
    "discard_broken": (
        "Please throw away anything that's broken.",
        "Could you get rid of the broken stuff?",
        "Throw out the broken things, please.",
    ),
    "keep_cold": (
        "{items_cap} should be kept cold, please put {them} in {fridge}.",
        "Could you put {items} back in {fridge}?",
        "Make sure {items} {be} cold again.",
    ),
    "lights_off": (
        "Turn off all the lights and faucets, please.",
        "We're heading out, can you switch off every light and faucet?",
        "Please make sure no lights or faucets are left on.",
    ),
    "laundry": (
        "Could you do the laundry? {items_cap} {need} washing and drying.",
        "Please wash and dry {items}.",
        "{items_cap} {be} dirty, can you wash and dry {them}?",
    ),
    "organise_shelf": (
        "Please tidy up: put all the books in {room} on {shelf}.",
        "Could you organise {shelf}? All the books in {room} go there.",
        "The books in {room} are a mess, please put them on {shelf}.",
    ),
}


_PLACE = "(on|inside {item} {dest})"  # on a surface, inside a container: the domain's signatures decide
_WHEREVER = ("(on|inside|held-by {item} ?)", "(holding ? {item})", "(discarded {item})")  # where it was
_SPEAKER = {"actor": "{speaker}"}  # "I put ...": the person speaking did it

EVENT_MEANINGS: dict[str, Phrasing] = {  # kind -> its meaning (the templates are EVENT_TEMPLATES')
    "move": Phrasing((), remove=_WHEREVER, add=(_PLACE, "(when (chills {dest}) (cold {item}))"), implied=_SPEAKER),
    "move_partial": Phrasing((), remove=("(on|inside {item} {src})",)),
    "dirty": Phrasing((), add=("(dirty {item})",)),
    "clean": Phrasing((), remove=("(dirty {item})",)),
    "break": Phrasing((), add=("(broken {item})",)),
    "light_on": Phrasing((), add=("(light-on {light})",), implied={"light": "the light in {room}"}),
    "light_off": Phrasing((), remove=("(light-on {light})",), implied={"light": "the light in {room}"}),
    "faucet_on": Phrasing((), add=("(faucet-on {sink})",)),
    "faucet_off": Phrasing((), remove=("(faucet-on {sink})",)),
    "open": Phrasing((), remove=("(closed {container})",)),
    "close": Phrasing((), add=("(closed {container})",)),
    "take": Phrasing((), remove=_WHEREVER, add=("(held-by {item} {actor})",), implied=_SPEAKER),
    "put_back": Phrasing((), remove=_WHEREVER, add=(_PLACE, "(when (chills {dest}) (cold {item}))"),
                         implied=_SPEAKER),
    "unmake": Phrasing((), remove=("(made {bed})",)),
    "warm": Phrasing((), remove=(*_WHEREVER, "(cold {item})"), add=(_PLACE,)),
    "soil": Phrasing((), add=("(dirty {item})",)),
    "go": Phrasing((), remove=("(in-room {actor} ?)",), add=("(in-room {actor} {room})",), implied=_SPEAKER),
}

TASK_MEANINGS: dict[str, Phrasing] = {  # kind -> its meaning (the templates are TASK_TEMPLATES')
    "pick_place": Phrasing((), goal=_PLACE),
    "hand_over_me": Phrasing((), goal="(held-by {item} {person})", implied={"person": "{speaker}"}),
    "hand_over": Phrasing((), goal="(held-by {item} {person})"),
    "wash_dishes": Phrasing((), goal="(forall (?d - dish) (or (not (dirty ?d)) (discarded ?d)))",
                            about={"dirty dishes": "dish"}),
    "make_bed": Phrasing((), goal="(made {bed})", implied={"bed": "the bed in {room}"}),
    "discard_broken": Phrasing((), goal="(forall (?i - item) (imply (broken ?i) (discarded ?i)))",
                               about={"broken items": "item"}),
    "keep_cold": Phrasing((), goal="(and (inside {items} {fridge}) (cold {items}))",
                          implied={"fridge": "the fridge"}),
    "lights_off": Phrasing((), goal="(and (forall (?l - light) (not (light-on ?l))) "
                                    "(forall (?s - sink) (not (faucet-on ?s))))",
                           about={"lights": "light", "sinks": "sink"}),
    "laundry": Phrasing((), goal="(and (not (dirty {items})) (not (wet {items})))"),
    "organise_shelf": Phrasing((), goal="(on {books} {shelf})", implied={"books": "every book in {room}"},
                               about={"books": "book"}),
}


def _declared(templates: dict[str, tuple[str, ...]], meanings: dict[str, Phrasing]) -> dict[str, Phrasing]:
    """Each kind's templates with its meaning."""
    return {kind: replace(meanings[kind], templates=t) for kind, t in templates.items()}


LANGUAGE = Language(
    "household",
    tasks=_declared(TASK_TEMPLATES, TASK_MEANINGS),
    events=_declared(EVENT_TEMPLATES, EVENT_MEANINGS),
    fields={"item": "item", "items": "items", "dest": "fixture", "src": "fixture", "sink": "fixture",
            "container": "fixture", "bed": "fixture", "fridge": "fixture", "shelf": "fixture", "light": "fixture",
            "books": "items", "room": "room", "actor": "person", "person": "person", "prep": ("on", "in"),
            "prep_src": ("on", "in"), "be": ("is", "are"), "them": ("it", "them"), "need": ("needs", "need")},
    joiners=("Also, ", "And ", "Oh, and "),
)
"""The household world's sentences and what each means, as a `Language` (AI2-THOR's and Habitat's worlds are
household worlds and speak it too): the rule interpreter reads every kind from here."""


def capitalize(text: str) -> str:
    """Upper-case the first letter only ("ana's mug" stays "Ana's mug"; "the mug" -> "The mug")."""
    return text[:1].upper() + text[1:]


_CAPS: dict[str, tuple[str, ...]] = {}  # template -> the `<field>_cap` fields it uses


def render_template(template: str, **fields: str) -> str:
    """Fill a template; `<field>_cap` fields are derived from `<field>` automatically."""
    caps = _CAPS.get(template)
    if caps is None:
        caps = _CAPS[template] = tuple(name for _, name, _, _ in Formatter().parse(template)
                                       if name and name.endswith("_cap"))
    for name in caps:  # only those the template uses
        if name not in fields and name[:-4] in fields:
            fields[name] = capitalize(fields[name[:-4]])
    return capitalize(template.format(**fields))


def join_utterances(first: str, second: str, rng: np.random.Generator) -> str:
    """One utterance that reports two events."""
    glue = LANGUAGE.joiners[int(rng.integers(len(LANGUAGE.joiners)))]
    return f"{first} {glue}{second[:1].lower() + second[1:]}"


class Describer:
    """Noun phrases for entities, as a given speaker would say them ("my red mug", "the fridge")."""

    def __init__(self, scene: HouseholdScene):
        self.scene = scene
        self._items: dict[tuple[str, str | None], str] = {}  # (item, speaker) -> its phrase
        self._fixtures: dict[tuple[str, str | None], str] = {}  # (fixture, speaker) -> its phrase
        self._noun_count: dict[str, int] = {}
        self._in_room: dict[tuple[str, str | None], int] = {}  # (noun, room) -> fixtures of that noun there
        for e in scene.entities.values():
            if e.pos is not None:
                self._noun_count[e.noun] = self._noun_count.get(e.noun, 0) + 1
                self._in_room[(e.noun, e.room)] = self._in_room.get((e.noun, e.room), 0) + 1

    def names_one(self, name: str) -> bool:
        """Whether `fixture`'s phrase names it alone: not "the dining table in the dining room" where that room
        has two (a real building's scene graph may), which no reader could tell apart."""
        e = self.scene.entities[name]
        return bool(e.attributes.get("owner")) or self._in_room.get((e.noun, e.room), 0) <= 1

    def person(self, name: str) -> str:
        return self.scene.entities[name].noun

    def room(self, name: str) -> str:
        label = self.scene.entities[name].noun
        return label if "'s " in label else f"the {label}"

    def item(self, name: str, speaker: str | None = None) -> str:
        found = self._items.get((name, speaker))
        if found is None:
            e = self.scene.entities[name]
            owner = e.attributes.get("owner")
            if owner and speaker and owner.lower() == speaker:
                found = "my " + e.describe(with_owner=False)
            elif owner:
                found = e.describe()
            else:
                found = "the " + e.describe()
            self._items[(name, speaker)] = found
        return found

    def fixture(self, name: str, speaker: str | None = None) -> str:
        found = self._fixtures.get((name, speaker))
        if found is None:
            found = self._fixtures[(name, speaker)] = self._fixture(name, speaker)
        return found

    def _fixture(self, name: str, speaker: str | None) -> str:
        e = self.scene.entities[name]
        owner = e.attributes.get("owner")
        if owner:  # furniture of someone's bedroom
            if speaker and owner.lower() == speaker:
                return f"my {e.noun}"
            return f"{owner}'s {e.noun}"
        if self._noun_count.get(e.noun, 0) <= 1:
            return f"the {e.noun}"
        return f"the {e.noun} in {self.room(e.room)}"

    @staticmethod
    def agreement(count: int) -> dict[str, str]:
        """Verb and pronoun forms that agree with a list of `count` things."""
        if count == 1:
            return {"be": "is", "them": "it", "need": "needs"}
        return {"be": "are", "them": "them", "need": "need"}

    def items(self, names: list[str], speaker: str | None = None) -> str:
        phrases = [self.item(n, speaker) for n in names]
        if len(phrases) == 1:
            return phrases[0]
        return ", ".join(phrases[:-1]) + " and " + phrases[-1]
