"""`KnowledgeGraph`: the robot's memory of the house, a networkx graph whose triplets are PDDL facts.

Entities are nodes (with their domain type and catalogue attributes: noun, colour, owner, ...). A binary
fact `(p s o)` is an edge s -> o keyed by `p`; a unary fact `(p s)` is `p` in the node's `flags`, the
triplet `(s, p, true)`. A set of atoms mirrors the graph so that planning reads memory in O(1) per fact.
Every change goes through `apply`, which records it in `history` with its source and step.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import networkx as nx

from servicerobot.errors import ServiceRobotError
from servicerobot.files import write_atomic
from servicerobot.memory.catalogue import entity_phrase
from servicerobot.memory.triplets import Delta, Triplet, atom_to_triplet, triplet_to_atom
from servicerobot.memory.verifier import Verifier
from servicerobot.pddl import Atom, Domain

__all__ = ["KnowledgeGraph", "MemoryFileError", "UpdateRecord"]

_WORD = re.compile(r"[a-z0-9]+")
FORMAT_VERSION = 1


class MemoryFileError(ServiceRobotError, ValueError):
    """A saved memory file is missing, corrupt or from an incompatible version."""


@dataclass(frozen=True)
class UpdateRecord:
    """One entry of memory history: where an update came from, when, and what it changed."""

    source: str  # "prior" | "percept" | "language" | "action" | "failure" | ...
    step: int
    delta: Delta
    text: str = ""

    def to_json(self) -> dict:
        return {"source": self.source, "step": self.step, "text": self.text, **self.delta.to_json()}

    @classmethod
    def from_json(cls, data: Mapping) -> UpdateRecord:
        return cls(data["source"], int(data["step"]), Delta.from_json({"REMOVE": data["REMOVE"],
                                                                       "ADD": data["ADD"]}), data.get("text", ""))


class KnowledgeGraph:
    """Typed entities and the facts believed about them; see the module docstring for the encoding."""

    def __init__(self, domain: Domain, robot: str = "robot", keep_history: bool = True):
        self.domain = domain
        self.robot = robot
        self.keep_history = keep_history
        self.graph = nx.MultiDiGraph()
        self.history: list[UpdateRecord] = []
        self._atoms: set[Atom] = set()
        self._by_arg: dict[str, set[Atom]] = {}
        self._snapshot: frozenset[Atom] | None = None
        self._phrases: dict[str, str] = {}
        self._catalogue: Mapping[str, dict] | None = None
        self.version = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_prior(cls, domain: Domain, prior: Mapping, robot: str = "robot", **kwargs) -> KnowledgeGraph:
        """Memory as the robot starts: the env's `prior` (entity catalogue and initial facts)."""
        kg = cls(domain, robot, **kwargs)
        for name, record in prior["entities"].items():
            record = dict(record)
            kg.add_entity(name, record.pop("type"), **record)
        if robot not in kg.graph:
            kg.add_entity(robot, "robot", noun="robot")
        kg.apply(Delta.of(add=(triplet_to_atom(t) for t in prior["facts"])), "prior", 0)
        return kg

    def add_entity(self, name: str, type_: str, /, **attributes: object) -> None:
        """Add (or re-type) an entity; its type must be a domain type."""
        if type_ not in self.domain.types:
            raise ServiceRobotError(f"entity {name!r} has type {type_!r}, which the domain "
                                    f"{self.domain.name!r} does not declare")
        if name in self.graph:
            self.graph.nodes[name].update(type=type_, **attributes)
        else:
            self.graph.add_node(name, type=type_, flags=set(), **attributes)
            self._by_arg[name] = set()
        self._phrases.pop(name, None)
        self._catalogue = None
        self.version += 1

    # ------------------------------------------------------------------ reading
    def __contains__(self, atom: Atom) -> bool:
        return atom in self._atoms

    def __len__(self) -> int:
        return len(self._atoms)

    @property
    def facts(self) -> frozenset[Atom]:
        """Every believed fact (a snapshot; cached until the next change)."""
        if self._snapshot is None:
            self._snapshot = frozenset(self._atoms)
        return self._snapshot

    def triplets(self) -> list[Triplet]:
        return sorted((atom_to_triplet(a) for a in self._atoms), key=lambda t: (t[0], t[1], str(t[2])))

    def has_entity(self, name: str) -> bool:
        return name in self.graph

    def type_of(self, name: str) -> str:
        return self.graph.nodes[name]["type"]

    def entity(self, name: str) -> dict:
        """The catalogue record of an entity: `type` plus its attributes (noun, colour, owner, ...)."""
        data = self.graph.nodes[name]
        return {k: v for k, v in data.items() if k != "flags"}

    @property
    def entities(self) -> Mapping[str, dict]:
        """name -> catalogue record, for every entity (read-only; the same object until an entity is added,
        so interpreters can cache what they derive from it)."""
        if self._catalogue is None:
            self._catalogue = MappingProxyType({n: self.entity(n) for n in self.graph.nodes})
        return self._catalogue

    @property
    def objects(self) -> dict[str, str]:
        """name -> type, for PDDL `:objects`."""
        return {n: d["type"] for n, d in self.graph.nodes(data=True)}

    def phrase(self, name: str) -> str:
        """How people name the entity ("Ana's red mug")."""
        if name not in self._phrases:
            self._phrases[name] = entity_phrase(self.graph.nodes[name])
        return self._phrases[name]

    def facts_about(self, entity: str) -> list[Atom]:
        """Facts in which `entity` is an argument, sorted."""
        return sorted(self._by_arg.get(entity, ()))

    def values(self, predicate: str, subject: str) -> list[str]:
        """The objects o with `(predicate subject o)` believed."""
        return sorted(a.args[1] for a in self._by_arg.get(subject, ())
                      if a.predicate == predicate and len(a.args) == 2 and a.args[0] == subject)

    def of_type(self, type_: str) -> list[str]:
        """Entities whose type is `type_` or a subtype."""
        sub = self.domain.types.is_subtype
        return sorted(n for n, d in self.graph.nodes(data=True) if sub(d["type"], type_))

    def neighbourhood(self, seeds: Iterable[str], depth: int = 2, max_facts: int = 300,
                      skip_types: tuple[str, ...] = ()) -> frozenset[Atom]:
        """Facts within `depth` hops of the seeds (edges in either direction), at most `max_facts`.

        Breadth first, so the nearest facts are kept when the cap is hit. Nodes of `skip_types` (hubs
        such as rooms) are reached but not expanded further.
        """
        seen: set[str] = set()
        queue = deque((s, 0) for s in seeds if s in self.graph)
        found: list[Atom] = []
        taken: set[Atom] = set()
        while queue and len(found) < max_facts:
            node, d = queue.popleft()
            if node in seen:
                continue
            seen.add(node)
            for atom in sorted(self._by_arg[node]):
                if atom not in taken:
                    taken.add(atom)
                    found.append(atom)
                    if len(found) >= max_facts:
                        break
            if d >= depth or (d > 0 and self.graph.nodes[node]["type"] in skip_types):
                continue
            for other in sorted(set(self.graph.successors(node)) | set(self.graph.predecessors(node))):
                if other not in seen:
                    queue.append((other, d + 1))
        return frozenset(found)

    def search(self, text: str, limit: int = 10) -> list[str]:
        """Entities whose name, type or attributes share words with `text`, best first."""
        words = set(_WORD.findall(text.lower()))
        if not words:
            return []
        scored = []
        for name, data in self.graph.nodes(data=True):
            bag = set(_WORD.findall(name.replace("_", " ")))
            bag.update(_WORD.findall(str(data["type"])))
            for key, value in data.items():
                if key not in ("flags", "type") and isinstance(value, str):
                    bag.update(_WORD.findall(value.lower()))
            overlap = len(words & bag)
            if overlap:
                scored.append((-overlap / len(bag | words), name))
        return [n for _, n in sorted(scored)[:limit]]

    # ------------------------------------------------------------------ writing
    def apply(self, delta: Delta, source: str, step: int, text: str = "") -> Delta:
        """Remove then add; returns the effective delta (what actually changed), recorded in history.

        Atoms over unknown entities are rejected with an error before anything changes; validation
        against the domain (types, functional relations) is the verifier's job.
        """
        for atom in delta.remove | delta.add:
            missing = [a for a in atom.args if a not in self.graph]
            if missing:
                raise ServiceRobotError(f"{atom} names unknown entities {missing}; add them to memory first")
        removed = frozenset(a for a in delta.remove if a in self._atoms and a not in delta.add)
        added = frozenset(a for a in delta.add if a not in self._atoms)
        for atom in removed:
            self._discard(atom)
        for atom in added:
            self._insert(atom)
        effective = Delta(removed, added)
        if effective:
            self._snapshot = None
            self.version += 1
        if self.keep_history and (effective or source == "language"):
            self.history.append(UpdateRecord(source, step, effective, text))
        return effective

    def _insert(self, atom: Atom) -> None:
        self._atoms.add(atom)
        for arg in atom.args:
            self._by_arg[arg].add(atom)
        if len(atom.args) == 1:
            self.graph.nodes[atom.args[0]]["flags"].add(atom.predicate)
        else:
            self.graph.add_edge(atom.args[0], atom.args[1], key=atom.predicate)

    def _discard(self, atom: Atom) -> None:
        self._atoms.discard(atom)
        for arg in atom.args:
            self._by_arg[arg].discard(atom)
        if len(atom.args) == 1:
            self.graph.nodes[atom.args[0]]["flags"].discard(atom.predicate)
        else:
            self.graph.remove_edge(atom.args[0], atom.args[1], key=atom.predicate)

    # ------------------------------------------------------------------ persistence
    def to_json(self) -> dict:
        return {"format": FORMAT_VERSION, "domain": self.domain.name, "robot": self.robot,
                "entities": dict(self.entities), "facts": [list(t) for t in self.triplets()],
                "history": [r.to_json() for r in self.history]}

    def save(self, path: str | os.PathLike) -> None:
        """Write memory as JSON atomically: a crash never leaves a half-written file.

        A symlink is followed to its target; an existing file keeps its mode, a new one is private (0600).

        Raises:
            MemoryFileError: the path is a folder, a dangling or looping symlink, or cannot be written, or an
                entity attribute is not a JSON value; the file already there is then left as it was.
        """
        try:
            text = json.dumps(self.to_json(), allow_nan=False)
        except (TypeError, ValueError) as exc:  # an entity attribute JSON cannot hold (a set, NaN, ...)
            raise MemoryFileError(f"cannot save memory to {path}: {exc}; entity attributes must be JSON values")\
                from exc
        try:
            write_atomic(path, text, new_mode=0o600)
        except OSError as exc:
            raise MemoryFileError(f"cannot save memory to {path}: {exc.strerror or exc}") from exc

    @classmethod
    def load(cls, path: str | os.PathLike, domain: Domain) -> KnowledgeGraph:
        """Read a file written by `save`, checking every fact against the domain like any update.

        Raises:
            MemoryFileError: the file is missing, unreadable, corrupt, for another domain or format, or holds a
                fact the domain does not allow (the message names it); never any other error.
        """
        try:
            data = json.loads(Path(path).read_bytes().decode("utf-8"))
        except FileNotFoundError as exc:
            raise MemoryFileError(f"no memory file at {path}") from exc
        except IsADirectoryError as exc:
            raise MemoryFileError(f"{path} is a folder, not a memory file") from exc
        except OSError as exc:
            raise MemoryFileError(f"cannot read memory file {path}: {exc.strerror or exc}") from exc
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise MemoryFileError(f"{path} is not a valid memory file (corrupt JSON: {exc})") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
            raise MemoryFileError(f"{path}: expected a servicerobot memory file of format {FORMAT_VERSION}")
        if data.get("domain") != domain.name:
            raise MemoryFileError(f"{path} holds memory for domain {data.get('domain')!r}, not {domain.name!r}")
        try:
            return cls._from_json(data, domain)
        except MemoryFileError as exc:
            raise MemoryFileError(f"{path}: {exc}") from exc
        except (ServiceRobotError, KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            raise MemoryFileError(f"{path}: malformed memory file ({type(exc).__name__}: {exc})") from exc

    @classmethod
    def _from_json(cls, data: dict, domain: Domain) -> KnowledgeGraph:
        robot, entities, facts, history = data["robot"], data["entities"], data["facts"], data["history"]
        if not isinstance(robot, str) or not isinstance(entities, dict) or not isinstance(facts, list) \
                or not isinstance(history, list):
            raise MemoryFileError("malformed memory file: robot must be a name, entities an object, facts and "
                                  "history lists")
        kg = cls(domain, robot)
        for name, record in entities.items():
            if not isinstance(record, dict) or not isinstance(record.get("type"), str) or "flags" in record:
                raise MemoryFileError(f"malformed memory file: entity {name!r} needs a record with a type "
                                      f"(and no 'flags'), got {record!r}")
            record = dict(record)
            kg.add_entity(name, record.pop("type"), **record)
        if robot not in kg.graph:
            raise MemoryFileError(f"the robot {robot!r} is not among the entities")
        delta = Delta.of(add=(triplet_to_atom(t) for t in facts))
        problems = Verifier(domain).check(delta, kg)
        if problems:
            raise MemoryFileError(f"{len(problems)} fact(s) do not fit the domain {domain.name!r}: "
                                  + "; ".join(problems[:5]))
        kg.apply(delta, "load", 0)
        records = []
        for r in history:
            record = UpdateRecord.from_json(r)
            if not isinstance(record.source, str) or not isinstance(record.text, str):
                raise MemoryFileError(f"malformed history record {r!r}: source and text must be strings")
            records.append(record)
        kg.history = records
        return kg
