"""Warming settings from the environment (standard library only).

Scan budgets (one SessionStart's share; a scan cut short is saved and the next session
continues it), the per-file cap, and the direct-dependencies-only switch.
"""

from __future__ import annotations

import os

MiB = 1024 * 1024


def _num(name: str, default: float, cast=float, minimum: float = 0.0):
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        val = cast(raw.strip())
    except ValueError:
        return default
    return val if val >= minimum else default


def scan_budget_s() -> float:
    """`MEMHOOKS_SCAN_BUDGET_S`: wall-clock seconds for one scan (default 1)."""
    return _num("MEMHOOKS_SCAN_BUDGET_S", 1.0)


def scan_max_bytes() -> int:
    """`MEMHOOKS_SCAN_MAX_BYTES`: bytes read by one scan, over all files (default 32 MiB)."""
    return int(_num("MEMHOOKS_SCAN_MAX_BYTES", 32 * MiB, int))


def scan_max_files() -> int:
    """`MEMHOOKS_SCAN_MAX_FILES`: manifests and lockfiles read by one scan (default 2000)."""
    return int(_num("MEMHOOKS_SCAN_MAX_FILES", 2000, int))


def scan_max_file_bytes() -> int:
    """`MEMHOOKS_SCAN_MAX_FILE_BYTES`: a file larger than this is skipped and counted (8 MiB)."""
    return int(_num("MEMHOOKS_SCAN_MAX_FILE_BYTES", 8 * MiB, int))


def direct_only() -> bool:
    """`MEMHOOKS_DIRECT_ONLY=1`: warm direct dependencies only, never transitive ones."""
    return os.environ.get("MEMHOOKS_DIRECT_ONLY", "").strip().lower() in ("1", "true", "yes", "on")
