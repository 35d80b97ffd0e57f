"""Where the ``conn`` key keeps its connections: what a batch reads and writes, and how little.

Every state call is a round trip to Spark's state server (tens of microseconds), so a
batch touches only the connections it names, and as few times as it can:

- ``entries`` (map: connection id -> its ``Conn`` and close marker, either may be null): a
  connection still open at the end of a batch, and the marker its close leaves. One write
  per changed connection; a read only where ``seen`` says the id may be stored.
- ``recent`` (list): the close markers of connections never stored, that is opened and
  closed within one batch (or closed unknown), one row per batch (the ids as JSON, the close
  times as int64 bytes). One append per batch instead of a write per connection: a backlog
  of short connections costs no round trip each. Read whole, and only when a batch names
  an id that ``recent_seen`` holds and ``entries`` lacks (a redelivery, or a false "maybe"
  of about 1 in 5 million).
- ``seen`` and ``recent_seen`` (:class:`udfs.seen.SeenIds`): the ids in ``entries`` (10 bits
  each: 1.3 MB at a million connections, read and written with each batch that names one)
  and the ids in ``recent``. Ids leave them only when the sweeps below rebuild them.
- ``clock`` (:class:`Clock`): the event-time clock and the bookkeeping that decides when
  stale markers go. ``entries`` is swept (a scan of every entry, which also rebuilds ``seen``)
  once as many markers were written to it as it held after the last sweep, and only when one
  can be stale; ``recent`` loses its stale rows (and ``recent_seen`` is rebuilt) once as many
  markers were appended as it kept. Both are amortised O(1) per marker.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from udfs.gauges import Conn, ConnectionsStep, GaugeConfig, stale_markers, sweep_due
from udfs.seen import SeenIds, Sizing

if TYPE_CHECKING:
    from udfs.steps import KeyedState

__all__ = ["CLOCK", "ENTRIES", "RECENT", "RECENT_SEEN", "SEEN", "Clock", "Store", "recent_markers"]

ENTRIES: Final = "entries"
RECENT: Final = "recent"
SEEN: Final = "seen"
RECENT_SEEN: Final = "recent_seen"
CLOCK: Final = "clock"
# A false "maybe" of ``seen`` costs a read that finds nothing (0.8%); of ``recent_seen``, a read of all of
# ``recent`` (2e-7).
SEEN_SIZING: Final = Sizing(bits_per_id=10, probes=7)
RECENT_SIZING: Final = Sizing(bits_per_id=32, probes=22)
_NO_CONN: Final = (None,) * len(Conn._fields)


class Clock(NamedTuple):
    """The ``conn`` key's bookkeeping (state variable ``clock``)."""

    clock_ms: int = 0  # the largest event time seen
    expired_total: int = 0  # connections the lease dropped since the checkpoint began
    markers_written: int = 0  # markers written to ``entries`` since its last sweep
    entries_live: int = 0  # entries the last sweep left
    oldest_marker_ms: int | None = None  # no marker in ``entries`` is older (None: none since the last sweep)
    recent_written: int = 0  # markers appended to ``recent`` since its last prune
    recent_live: int = 0  # markers in ``recent`` after its last prune
    recent_oldest_ms: int | None = None  # the earliest a row of ``recent`` is wholly stale (its newest marker)

    @classmethod
    def read(cls, state: KeyedState) -> Clock:
        stored = state.get(CLOCK)
        return cls(*(None if v is None else int(v) for v in stored)) if stored else cls()  # type: ignore[arg-type]

    def horizon(self, config: GaugeConfig) -> int:
        """Markers older than this no longer count."""
        return self.clock_ms - config.closed_retention_ms

    def entries_sweep_due(self, config: GaugeConfig) -> bool:
        return (sweep_due(self.markers_written, self.entries_live) and self.oldest_marker_ms is not None
                and self.oldest_marker_ms < self.horizon(config))

    def recent_prune_due(self, config: GaugeConfig) -> bool:
        return (sweep_due(self.recent_written, self.recent_live) and self.recent_oldest_ms is not None
                and self.recent_oldest_ms < self.horizon(config))


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _split(value: tuple[Any, ...] | None) -> tuple[Conn | None, int | None]:
    if value is None:
        return None, None
    return (None if value[0] is None else Conn(*value[:-1])), (None if value[-1] is None else int(value[-1]))


def _recent_row(markers: Mapping[str, int]) -> tuple[int, int, str, bytes]:
    times = np.fromiter(markers.values(), dtype=np.int64, count=len(markers))
    return int(times.max()), len(markers), json.dumps(list(markers)), times.astype("<i8").tobytes()


def recent_markers(rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
    """The markers of ``recent``'s rows, the latest per id."""
    out: dict[str, int] = {}
    for _, _, cids, closed in rows:
        for cid, ms in zip(json.loads(cids), np.frombuffer(bytes(closed), dtype="<i8").tolist(), strict=True):
            if ms > out.get(cid, ms - 1):
                out[cid] = ms
    return out


class Store:
    """One batch's view of the stored connections: ``read``, ``write`` or ``expire``, then ``save``."""

    def __init__(self, state: KeyedState) -> None:
        self._state = state
        self.clock = Clock.read(state)
        self._seen: SeenIds | None = None
        self._recent_seen: SeenIds | None = None
        self._stored: dict[str, tuple[Any, ...]] = {}
        self._recent: dict[str, int] | None = None

    @property
    def seen(self) -> SeenIds:
        if self._seen is None:
            self._seen = SeenIds.from_rows(self._state.rows(SEEN), SEEN_SIZING)
        return self._seen

    @property
    def recent_seen(self) -> SeenIds:
        if self._recent_seen is None:
            self._recent_seen = SeenIds.from_rows(self._state.rows(RECENT_SEEN), RECENT_SIZING)
        return self._recent_seen

    def read(self, cids: list[str]) -> tuple[dict[str, Conn], dict[str, int]]:
        """The stored connections and markers of ``cids`` (absent: none stored)."""
        conns, markers, missing = {}, {}, []
        maybe_entry = self.seen.might_contain(cids).tolist()
        maybe_recent = self.recent_seen.might_contain(cids).tolist()
        for cid, entry, recent in zip(cids, maybe_entry, maybe_recent, strict=True):
            value = self._state.map_get(ENTRIES, (cid,)) if entry else None
            if value is None:
                if recent:
                    missing.append(cid)
                continue
            self._stored[cid] = value
            conn, marker = _split(value)
            if conn is not None:
                conns[cid] = conn
            if marker is not None:
                markers[cid] = marker
        if missing:
            known = self._recent_markers()
            markers.update({cid: known[cid] for cid in missing if cid in known})
        return conns, markers

    def write(self, result: ConnectionsStep) -> None:
        """Store what a batch changed: ``entries`` for stored or open connections, one ``recent`` row for the rest."""
        fresh: dict[str, int] = {}
        stored, markers = [], []
        for cid in result.conns.keys() | result.markers.keys():
            before = self._stored.get(cid)
            conn, marker = _split(before)
            conn, marker = result.conns.get(cid, conn), result.markers.get(cid, marker)
            if before is None and conn is None:
                if marker is not None:
                    fresh[cid] = marker
                continue
            self._put(cid, conn, marker)
            if before is None:
                stored.append(cid)
            if marker is not None and cid in result.markers:
                markers.append(marker)
        self.seen.add(stored)
        c = self.clock._replace(clock_ms=result.clock_ms)
        if markers:
            c = c._replace(markers_written=c.markers_written + len(markers),
                           oldest_marker_ms=_min(c.oldest_marker_ms, min(markers)))
        if fresh:
            row = _recent_row(fresh)
            self._state.append_rows(RECENT, [row])
            self.recent_seen.add(fresh)
            if self._recent is not None:
                self._recent.update(fresh)
            c = c._replace(recent_written=c.recent_written + len(fresh),
                           recent_oldest_ms=_min(c.recent_oldest_ms, row[0]))
        self.clock = c

    def open_conns(self) -> dict[str, Conn]:
        """Every open connection (the lease's scan)."""
        return {cid[0]: conn for cid, v in self._state.map_items(ENTRIES) if (conn := _split(v)[0]) is not None}

    def expire(self, gone: Mapping[str, Conn]) -> None:
        """Drop connections the lease ran out on: each leaves a marker at its last event, and is counted."""
        for cid, conn in gone.items():
            self._put(cid, None, conn.last_event_ms)
        if gone:
            times = [c.last_event_ms for c in gone.values()]
            self.clock = self.clock._replace(expired_total=self.clock.expired_total + len(gone),
                                             markers_written=self.clock.markers_written + len(times),
                                             oldest_marker_ms=_min(self.clock.oldest_marker_ms, min(times)))

    def save(self, config: GaugeConfig) -> None:
        """Drop stale markers when due, then write what changed of the filters and the clock."""
        if self.clock.entries_sweep_due(config):
            self._sweep(config)
        if self.clock.recent_prune_due(config):
            self._prune(config)
        for name, seen in ((SEEN, self._seen), (RECENT_SEEN, self._recent_seen)):
            if seen is not None and seen.changed:
                self._state.put_rows(name, seen.rows())
        self._state.put(CLOCK, tuple(self.clock))

    def _sweep(self, config: GaugeConfig) -> None:
        """Drop ``entries``' stale markers (and entries left empty); rebuild ``seen`` from what is left."""
        entries = {cid[0]: _split(v) for cid, v in self._state.map_items(ENTRIES)}
        marks = {cid: marker for cid, (_, marker) in entries.items() if marker is not None}
        stale = set(stale_markers(marks, self.clock.clock_ms, config))
        for cid in stale:
            self._put(cid, entries[cid][0], None)
        kept = [cid for cid, (conn, _) in entries.items() if cid not in stale or conn is not None]
        left = [ms for cid, ms in marks.items() if cid not in stale]
        self._seen = SeenIds.rebuilt(kept, SEEN_SIZING)
        self.clock = self.clock._replace(markers_written=0, entries_live=len(kept),
                                         oldest_marker_ms=min(left) if left else None)

    def _prune(self, config: GaugeConfig) -> None:
        """Keep the rows of ``recent`` with a marker that still counts; rebuild ``recent_seen`` from them."""
        horizon = self.clock.horizon(config)
        rows = self._state.rows(RECENT)
        kept = [r for r in rows if int(r[0]) >= horizon]
        if len(kept) < len(rows):
            self._state.put_rows(RECENT, kept)
        self._recent_seen = SeenIds.rebuilt(list(recent_markers(kept)), RECENT_SIZING)
        self._recent = None
        self.clock = self.clock._replace(recent_written=0, recent_live=sum(int(r[1]) for r in kept),
                                         recent_oldest_ms=min((int(r[0]) for r in kept), default=None))

    def _recent_markers(self) -> dict[str, int]:
        if self._recent is None:
            self._recent = recent_markers(self._state.rows(RECENT))
        return self._recent

    def _put(self, cid: str, conn: Conn | None, marker: int | None) -> None:
        if conn is None and marker is None:
            self._state.map_remove(ENTRIES, (cid,))
        else:
            self._state.map_put(ENTRIES, (cid,), (*(_NO_CONN if conn is None else conn), marker))
