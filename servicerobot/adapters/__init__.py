"""Adapters: a backend's raw observation (poses, metadata) -> facts and percepts in the domain's vocabulary.

One module per backend; each imports its simulator lazily, so importing this package needs none of them.
"""

__all__: list[str] = []
