"""Writers of the warm's own tables: api_state (Context7 back-off, Context7's last known
budget, resumable scans) and warm_state (the lockfile fingerprint and ranked names of a
project's last warm)."""

from __future__ import annotations

import json
import math
import time

BUDGET_KEY = "context7.budget"  # api_state key of Context7's last known budget (its headers)
_BUDGET_COUNTS = ("limit", "remaining", "status")
_BUDGET_TIMES = ("reset_at", "retry_after_s")
MAX_BUDGET_COUNT = 10**9
MAX_POLICY_CHARS = 80


def set_api_state(conn, key: str, value: str, until: float) -> None:
    conn.execute(
        "INSERT INTO api_state (key, value, until) VALUES (?, ?, ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value, until = excluded.until",
        (key, value, until),
    )


def delete_api_state(conn, key: str) -> None:
    conn.execute("DELETE FROM api_state WHERE key = ?", (key,))


def clear_api_fault(conn, key: str, now: float) -> None:
    """The API answered: an earlier fault is over, except a 429 still inside its Retry-After."""
    conn.execute("DELETE FROM api_state WHERE key = ? AND (value != '429' OR until <= ?)", (key, now))


def save_warm_state(conn, project: str, *, fingerprint: str, files: list, dirs: list,
                    ranked: list[dict], now: float) -> None:
    conn.execute(
        "INSERT INTO warm_state (project, fingerprint, files, dirs, ranked, warmed_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project) DO UPDATE SET"
        " fingerprint = excluded.fingerprint, files = excluded.files, dirs = excluded.dirs,"
        " ranked = excluded.ranked, warmed_at = excluded.warmed_at",
        (project, fingerprint, json.dumps(files), json.dumps(dirs), json.dumps(ranked), now),
    )


def _count(value, top: int = MAX_BUDGET_COUNT) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        return None
    return value


def _time(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value) if 0 <= value < 1e11 else None


def clean_budget(figures, now: float | None = None) -> dict | None:
    """Context7's budget figures as the store keeps them (the same check on the way in and
    out): counts are integers in range, times finite, the policy one short printable ASCII
    string, and `seen_at` never later than now; None when there is no usable `seen_at`."""
    now = time.time() if now is None else now
    if not isinstance(figures, dict):
        return None
    seen = _time(figures.get("seen_at"))
    if seen is None or seen > now:
        return None
    out: dict = {k: _count(figures.get(k), 999 if k == "status" else MAX_BUDGET_COUNT)
                 for k in _BUDGET_COUNTS}
    out.update({k: _time(figures.get(k)) for k in _BUDGET_TIMES})
    pol = figures.get("policy")
    out["policy"] = (pol if isinstance(pol, str) and 0 < len(pol) <= MAX_POLICY_CHARS
                     and pol.isascii() and pol.isprintable() else None)
    if out["limit"] is not None and out["remaining"] is not None and out["remaining"] > out["limit"]:
        out["remaining"] = None
    out["seen_at"] = seen
    return out


def save_budget(conn, figures: dict, now: float | None = None) -> bool:
    """Keep Context7's latest budget figures (memhooks.warm.context7_budget) in api_state,
    unless the stored ones were seen later. False when the figures are not usable."""
    now = time.time() if now is None else now
    clean = clean_budget(figures, now)
    if clean is None:
        return False
    row = conn.execute("SELECT value FROM api_state WHERE key = ?", (BUDGET_KEY,)).fetchone()
    if row is not None:
        try:
            old = clean_budget(json.loads(row[0]), now)
        except (TypeError, ValueError, RecursionError):
            old = None
        if old is not None and old["seen_at"] > clean["seen_at"]:
            return False
    until = clean["reset_at"] if clean["reset_at"] is not None else clean["seen_at"]
    set_api_state(conn, BUDGET_KEY, json.dumps(clean, separators=(",", ":"), sort_keys=True), until)
    return True
