"""Rank scanned dependencies for SessionStart warming (standard library only)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from memhooks.warm.lockfiles import KIND_ORDER, Dep

__all__ = ["RankedDep", "rank", "is_stub", "default_top_n", "DEFAULT_TOP_N"]

DEFAULT_TOP_N = 20


@dataclass(frozen=True, slots=True)
class RankedDep:
    name: str  # as written by the best-ranked record
    key: str  # normalised
    ecosystem: str
    version: str | None  # a locked/installed version when any file gave one
    kind: str  # best kind over all files: runtime > dev > transitive
    manifests: int  # how many distinct files reference it


def is_stub(ecosystem: str, key: str) -> bool:
    """Type-only stub packages, never worth warming: @types/* (npm), types-* and *-stubs (pypi)."""
    if ecosystem == "npm":
        return key.startswith("@types/")
    if ecosystem == "pypi":
        return key.startswith("types-") or key.endswith("-stubs")
    return False


def default_top_n() -> int:
    raw = os.environ.get("MEMHOOKS_TOP_N", "")
    try:
        n = int(raw)
    except ValueError:
        return DEFAULT_TOP_N
    return n if n >= 0 else DEFAULT_TOP_N


def rank(deps: Iterable[Dep], top_n: int | None = None) -> list[RankedDep]:
    """Merge deps by (ecosystem, key) and order them: direct runtime, direct dev, transitive;
    ties by the number of files referencing the dep (more first), then by key.
    ``top_n=None`` takes ``MEMHOOKS_TOP_N`` from the environment (default 20)."""
    if top_n is None:
        top_n = default_top_n()
    merged: dict[tuple[str, str], list] = {}
    for d in deps:
        if is_stub(d.ecosystem, d.key):
            continue
        k = (d.ecosystem, d.key)
        order = KIND_ORDER.get(d.kind, 2)
        m = merged.get(k)
        if m is None:
            # [name, order, version, version_order, files]
            merged[k] = [d.name, order, d.version, order if d.version else 9, {d.manifest}]
            continue
        m[4].add(d.manifest)
        if order < m[1]:
            m[0] = d.name
            m[1] = order
        if d.version and order < m[3]:
            m[2] = d.version
            m[3] = order
    kinds = {v: k for k, v in KIND_ORDER.items()}
    items = sorted(merged.items(), key=lambda kv: (kv[1][1], -len(kv[1][4]), kv[0][1], kv[0][0]))
    if top_n is not None:
        items = items[: max(top_n, 0)]
    return [RankedDep(m[0], key, eco, m[2], kinds[m[1]], len(m[4])) for (eco, key), m in items]
