"""The small graph a text describes (nodes it mentions, relations it states), matched against memory by
search-based retrieval; an interpreter writes it (`Interpreter.query_graph`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["QueryEdge", "QueryGraph", "QueryNode"]


@dataclass(frozen=True)
class QueryNode:
    """A thing the text mentions: its words, and its domain type when the text makes it clear."""

    id: str
    text: str
    type: str | None = None


@dataclass(frozen=True)
class QueryEdge:
    """A relation the text states between two mentioned things (`relation` in domain vocabulary if known)."""

    source: str
    relation: str
    target: str


@dataclass(frozen=True)
class QueryGraph:
    """The small graph a text describes, matched against memory by search-based retrieval."""

    nodes: tuple[QueryNode, ...] = ()
    edges: tuple[QueryEdge, ...] = ()
