"""Near-miss suggestions ("did you mean ...?") for names that are not known."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "name_list"]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` for the closest candidate, or `""` when none is close."""
    matches = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=1, cutoff=0.5)
    return f"; did you mean {matches[0]!r}?" if matches else ""


def name_list(names: Iterable[str], limit: int = 20) -> str:
    """Names joined by commas, shortened with a count after `limit` of them."""
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
