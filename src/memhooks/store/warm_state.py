"""Writers of the warm's own tables: api_state (Context7 back-off, resumable scans) and
warm_state (the lockfile fingerprint and ranked names of a project's last warm)."""

from __future__ import annotations

import json


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
