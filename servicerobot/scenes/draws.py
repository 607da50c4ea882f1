"""numpy's `Generator.random()` and `Generator.integers(n)` without their per-call overhead, same numbers.

A house is hundreds of small draws, and each `Generator.integers(n)` call costs microseconds of argument
checks around a few nanoseconds of arithmetic. `Draws` takes the PCG64 generator's raw 64-bit outputs in
batches (one `random_raw` call each) and computes from them exactly what numpy computes: `random()` is a
raw output's top 53 bits; `integers(n)` is Lemire's bounded method on 32-bit halves, numpy's buffer of the
spare half kept as numpy keeps it. `sync()` then leaves the generator where numpy's own calls would have:
a seed gives the same house as before, and whoever draws next from the generator sees the same stream.
Other methods (`choice`, draws of arrays) go to the generator itself, synced around the call, so a `Draws`
stands in for the generator of an episode's people or tasks. `tests/test_draws.py` checks every call
against numpy's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Draws", "draws"]

_MASK32 = 0xFFFFFFFF
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53: numpy's double from a raw output's top 53 bits


class Draws:
    """`random()` and `integers(n)` of a PCG64 `numpy.random.Generator`, from its raw outputs in batches.

    The generator must not be used directly until `sync()` (the draws read ahead of what they used); its
    other methods are reached through the `Draws` itself, which syncs around them.
    """

    __slots__ = ("_batch", "_bits", "_drawn", "_has32", "_i", "_n", "_raw", "_rng", "_start", "_u32")

    def __init__(self, rng: np.random.Generator, batch: int = 128):
        self._rng, self._bits, self._batch = rng, rng.bit_generator, batch
        self._raw: list[int] = []
        self._restart()  # the first batch is drawn on first use

    def _refill(self) -> None:
        self._raw = self._bits.random_raw(self._batch).tolist()
        self._i, self._n = 0, self._batch
        self._drawn += self._batch

    def random(self) -> float:
        """`Generator.random()`: a float in [0, 1)."""
        if self._i == self._n:
            self._refill()
        i = self._i
        self._i = i + 1
        return (self._raw[i] >> 11) * _TO_UNIT

    def _next32(self) -> int:
        """numpy's next 32-bit output: the spare upper half of the last raw output split, or the lower half
        of a new one (whose upper half is kept)."""
        if self._has32:
            self._has32 = False
            return self._u32
        if self._i == self._n:
            self._refill()
        raw = self._raw[self._i]
        self._i += 1
        self._has32, self._u32 = True, raw >> 32
        return raw & _MASK32

    def integers(self, low: int, high: int | None = None, size=None) -> int:
        """`Generator.integers(low, high)` for one number, `high - low` (or `low` alone: [0, low)) at most
        2**32: an int in [low, high). With a `size`, the generator's own (an array)."""
        if size is not None:
            return self._direct("integers", low, high, size=size)
        if high is not None:
            return low + self.integers(high - low)
        n = low
        if n <= 1:
            if n == 1:  # numpy draws nothing for a range of one
                return 0
            raise ValueError(f"integers(n) needs n >= 1, got {n}")
        if n > 1 << 32:
            raise ValueError(f"Draws.integers covers n up to 2**32, got {n}; draw from the Generator instead")
        if n == 1 << 32:  # numpy returns the 32-bit output itself
            return self._next32()
        if self._has32:  # _next32(), inline: most calls of a house are these
            self._has32 = False
            m = self._u32 * n
        else:
            if self._i == self._n:
                self._refill()
            raw = self._raw[self._i]
            self._i += 1
            self._has32, self._u32 = True, raw >> 32
            m = (raw & _MASK32) * n
        if (m & _MASK32) < n:  # maybe biased: numpy's rejection (rare: n / 2**32 of draws)
            threshold = (_MASK32 - (n - 1)) % n
            while (m & _MASK32) < threshold:
                m = self._next32() * n
        return m >> 32

    def __getattr__(self, name: str):
        """Any other method of the generator (`choice`, `integers(n, size=k)`, ...): it is called on the
        generator itself, put in place first (`sync`), and the draws go on from where it leaves it."""
        if name.startswith("_"):  # not the generator's public API (and not yet set slots: no recursion)
            raise AttributeError(name)
        method = getattr(self._rng, name)
        if not callable(method):
            return method
        return lambda *args, **kwargs: self._direct(name, *args, **kwargs)

    def _direct(self, name: str, *args, **kwargs):
        """The generator's own `name(*args, **kwargs)`, in its place in the stream."""
        self.sync()
        try:
            return getattr(self._rng, name)(*args, **kwargs)
        finally:
            self._restart()

    def _restart(self) -> None:
        """Go on from the generator's state now (something drew from it directly)."""
        start = self._start = self._bits.state
        self._has32, self._u32 = bool(start["has_uint32"]), int(start["uinteger"])
        self._raw, self._i, self._n, self._drawn = [], 0, 0, 0

    def sync(self) -> None:
        """Put the generator where numpy's own calls would have left it: the raw outputs used consumed,
        the spare 32-bit half buffered as numpy buffers it."""
        used = self._drawn - (self._n - self._i)
        if not used and self._has32 == bool(self._start["has_uint32"]):
            return  # nothing drawn since the generator's state was read
        bits = self._bits
        bits.state = self._start
        bits.advance(used)
        state = bits.state
        state["has_uint32"], state["uinteger"] = int(self._has32), self._u32
        bits.state = state
        self._start = state
        self._raw, self._i, self._n, self._drawn = [], 0, 0, 0


def draws(rng: np.random.Generator) -> Draws | None:
    """`Draws` over `rng`, or None when its bit generator is not PCG64 (then draw from `rng` itself)."""
    return Draws(rng) if type(rng.bit_generator) is np.random.PCG64 else None
