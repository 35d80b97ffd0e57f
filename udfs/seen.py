"""Which connection ids may be stored: a Bloom filter, so a new connection costs no state read.

The gauge step reads the stored entry (open connection or close marker) of every
connection a batch names, and in Spark each read is a round trip to the state
server. Almost every ``connection_opened`` names a connection never seen, whose
read finds nothing. :class:`SeenIds` answers "certainly not stored" for those
without a read, and "maybe" otherwise (a false "maybe" costs one read that finds
nothing; a "no" is never wrong, so the counting is exact).

It is a scalable Bloom filter: a list of filters of doubling capacity (a power of
two), new ids going into the last one, so it grows with what it holds without a
rebuild. ``Sizing`` sets bits and probes per id, so the false "maybe" rate per
filter. Ids are hashed with BLAKE2b (stable across processes, Python and library
versions: the filter lives in the checkpoint) and probed by double hashing,
vectorized with numpy. Removing an entry leaves its id in the filter (a later read
finds nothing); :meth:`SeenIds.rebuilt` starts over from the ids still stored, which
the gauge step does when it sweeps them anyway (``udfs.gauge_store``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

__all__ = ["FIRST_CAPACITY", "SeenIds", "Sizing"]

FIRST_CAPACITY: Final = 8192  # ids the first filter holds (a power of two, as every later one)


@dataclass(frozen=True)
class Sizing:
    """Bits and probes per id: false "maybe" about ``(1 - e**(-probes/bits)) ** probes`` per filter."""

    bits_per_id: int
    probes: int


def _hashes(ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Two 64-bit hashes per id (the halves of a 128-bit BLAKE2b digest); the second odd."""
    digests = b"".join(hashlib.blake2b(i.encode("utf-8", "surrogatepass"), digest_size=16).digest() for i in ids)
    words = np.frombuffer(digests, dtype="<u8").reshape(-1, 2) if ids else np.zeros((0, 2), dtype=np.uint64)
    return words[:, 0], words[:, 1] | np.uint64(1)  # an odd step visits distinct bits of a power-of-two filter


def _power_of_two(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


@dataclass
class _Filter:
    capacity: int
    count: int
    probes: int
    bits: np.ndarray  # uint8

    @classmethod
    def empty(cls, capacity: int, sizing: Sizing) -> _Filter:
        return cls(capacity, 0, sizing.probes, np.zeros(capacity * sizing.bits_per_id // 8, dtype=np.uint8))

    def _positions(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        m = np.uint64(self.bits.size * 8)
        steps = np.arange(self.probes, dtype=np.uint64)
        with np.errstate(over="ignore"):  # the hashes wrap modulo 2**64 by design
            return (h1[:, None] + steps[None, :] * h2[:, None]) % m

    def contains(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        pos = self._positions(h1, h2)
        hit = (self.bits[pos >> np.uint64(3)] >> (pos & np.uint64(7)).astype(np.uint8)) & 1
        return np.asarray(hit.all(axis=1))

    def add(self, h1: np.ndarray, h2: np.ndarray) -> None:
        pos = self._positions(h1, h2).ravel()
        np.bitwise_or.at(self.bits, pos >> np.uint64(3), (1 << (pos & np.uint64(7))).astype(np.uint8))
        self.count += len(h1)


@dataclass
class SeenIds:
    """The filter: ``might_contain`` a batch of ids, ``add`` the ids stored; rows for a ListState."""

    sizing: Sizing
    filters: list[_Filter] = field(default_factory=list)
    changed: bool = False

    @property
    def count(self) -> int:
        """Ids added since the filter began (removed ones included)."""
        return sum(f.count for f in self.filters)

    def might_contain(self, ids: Sequence[str]) -> np.ndarray:
        """Per id: False when it is certainly not stored."""
        out = np.zeros(len(ids), dtype=bool)
        if not ids or not self.filters:
            return out
        h1, h2 = _hashes(ids)
        for f in self.filters:
            out |= f.contains(h1, h2)
        return out

    def add(self, ids: Iterable[str]) -> None:
        """Remember ``ids`` as stored (a new filter, twice as large, when the last one is full)."""
        todo = list(ids)
        if not todo:
            return
        h1, h2 = _hashes(todo)
        start = 0
        while start < len(todo):
            if not self.filters or self.filters[-1].count >= self.filters[-1].capacity:
                capacity = FIRST_CAPACITY if not self.filters else self.filters[-1].capacity * 2
                self.filters.append(_Filter.empty(capacity, self.sizing))
            last = self.filters[-1]
            take = min(len(todo) - start, last.capacity - last.count)
            last.add(h1[start:start + take], h2[start:start + take])
            start += take
        self.changed = True

    @classmethod
    def rebuilt(cls, ids: Sequence[str], sizing: Sizing) -> SeenIds:
        """A filter of exactly ``ids``, sized for at least twice as many."""
        seen = cls(sizing, [_Filter.empty(max(FIRST_CAPACITY, _power_of_two(2 * len(ids))), sizing)], changed=True)
        seen.add(ids)
        return seen

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, int, int, bytes]], sizing: Sizing) -> SeenIds:
        """From the state's rows: ``(capacity, count, probes, bits)`` per filter, in order."""
        return cls(sizing, [_Filter(int(c), int(n), int(k), np.frombuffer(bytes(b), dtype=np.uint8).copy())
                            for c, n, k, b in rows])

    def rows(self) -> list[tuple[int, int, int, bytes]]:
        return [(f.capacity, f.count, f.probes, f.bits.tobytes()) for f in self.filters]
