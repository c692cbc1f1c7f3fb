"""Folding the reads log into the counters (standard library only): the lines are summed in
memory by key (project, tier, outcome; content hash and day) and written in one statement
per key, so a log of any length folds in memory bounded by MAX_KEYS keys (a larger set is
written out as it goes) and in a short transaction."""

from __future__ import annotations

import time

from memhooks.sqltext import storable_path
from memhooks.store.projections import fold_read_totals

MAX_KEYS = 20000


class ReadTotals:
    def __init__(self) -> None:
        self.counters: dict = {}  # (project, tier, outcome) -> [n, last_at]
        self.reads: dict = {}  # (content_hash, origin, day) -> [n, last_at]
        self.lines = 0

    def add(self, record: dict) -> None:
        self.lines += 1
        at = record["at"]
        if record["kind"] != "doc":  # a lookup's hit or miss
            key = (storable_path(record["project"]), record["kind"], record["outcome"])
            tot = self.counters.setdefault(key, [0, at])
            tot[0] += 1
            tot[1] = max(tot[1], at)
        if record["content_hash"]:
            day = time.strftime("%Y-%m-%d", time.gmtime(at))
            origin = record.get("origin") if record.get("origin") in ("agent", "user") else "agent"
            tot = self.reads.setdefault((record["content_hash"], origin, day), [0, at])
            tot[0] += 1
            tot[1] = max(tot[1], at)

    def full(self) -> bool:
        return len(self.counters) + len(self.reads) >= MAX_KEYS

    def apply(self, conn) -> int:
        """Write the totals (inside the caller's transaction) and start again. Returns the
        lines they counted."""
        fold_read_totals(conn, [(p or "", t, o, n, at) for (p, t, o), (n, at) in self.counters.items()],
                         [(h, o, day, n, at) for (h, o, day), (n, at) in self.reads.items()])
        lines, self.lines = self.lines, 0
        self.counters, self.reads = {}, {}
        return lines
