"""Greedy decoding under a grammar without checking the whole vocabulary at every token (same tokens).

llama-cpp-python samples through a llama.cpp chain (penalties, grammar, greedy) that builds a candidate for
each of the vocabulary's 151,936 tokens (Qwen2.5) and matches every one against the grammar before taking
the best: ~14 ms per token on this CPU, as long as evaluating the token itself with the 0.5B model. Greedy
decoding only needs the best token the grammar allows, and the penalties only lower logits, so the tokens
with the `_TOP` highest raw logits go through the same penalty and grammar samplers first; when the best
survivor beats every raw logit outside them, it is the chain's answer. Otherwise (or on a tie) the whole
chain runs as before.
"""

from __future__ import annotations

import ctypes
import types

import numpy as np

__all__ = ["install", "sample_counts"]

_TOP = 16
# llama-cpp-python's chain for temperature 0 with a grammar ("?penalties": llama.cpp's no-op for neutral penalties)
_CHAINS = {(b"penalties", b"grammar", b"greedy"), (b"?penalties", b"grammar", b"greedy")}
sample_counts = {"fast": 0, "full": 0}  # tokens decided by the short list / by the whole chain


def _chain_members(chain) -> list | None:
    """The chain's (penalties, grammar) samplers where it is exactly penalties -> grammar -> greedy."""
    import llama_cpp

    n = llama_cpp.llama_sampler_chain_n(chain)
    members = [llama_cpp.llama_sampler_chain_get(chain, i) for i in range(n)]
    if tuple(llama_cpp.llama_sampler_name(m) for m in members) not in _CHAINS:
        return None
    return members[:2]


def _fast_greedy(llama, members, idx: int) -> int | None:
    """The chain's greedy token from the `_TOP` best raw logits, or None when they cannot decide it."""
    import llama_cpp

    n_vocab = llama.n_vocab()
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, idx), shape=(n_vocab,))
    top = np.argpartition(logits, n_vocab - _TOP - 1)[n_vocab - _TOP - 1:]
    top = top[np.argsort(-logits[top], kind="stable")]
    outside = float(logits[top[-1]])  # the best raw logit not in the short list
    top = top[:-1]
    data = (llama_cpp.llama_token_data * len(top))()
    for slot, token in zip(data, top):
        slot.id, slot.logit, slot.p = int(token), float(logits[token]), 0.0
    cur = llama_cpp.llama_token_data_array(data=data, size=len(top), selected=-1, sorted=False)
    for member in members:  # penalties, then grammar (rejected tokens get -inf)
        llama_cpp.llama_sampler_apply(member, ctypes.byref(cur))
    best_token, best, second = None, -np.inf, -np.inf
    for i in range(cur.size):
        logit = cur.data[i].logit
        if logit > best:
            best_token, best, second = cur.data[i].id, logit, best
        elif logit > second:
            second = logit
    if best_token is None or not best > outside or best == second:
        return None  # a token outside the list may win, or a tie whose order the chain decides
    return int(best_token)


def _sample(self, *args, idx: int | None = None, **kwargs) -> int:
    sampler = self._sampler
    if sampler is not None and kwargs.get("temp", 0.8) == 0.0 and kwargs.get("grammar") is not None:
        if getattr(sampler, "_greedy_members", False) is False:  # looked up once per chain, not per token
            sampler._greedy_members = _chain_members(sampler.sampler)
        members = sampler._greedy_members
        if members is not None:
            ridx = idx - self.n_tokens if idx is not None else -1
            token = _fast_greedy(self, members, ridx)
            if token is not None:
                import llama_cpp

                llama_cpp.llama_sampler_accept(sampler.sampler, token)  # as llama_sampler_sample does
                sample_counts["fast"] += 1
                return token
        sample_counts["full"] += 1
    return type(self).sample(self, *args, idx=idx, **kwargs)


def install(llama) -> None:
    """Make this `llama_cpp.Llama` decode greedily under a grammar through the short list first."""
    llama.sample = types.MethodType(_sample, llama)
