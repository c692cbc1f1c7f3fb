"""The per-provider tally: calls journaled per documentation provider and project, the
failures among them, the rate-limit and quota answers among those, and when the last of each
was (memhooks.ingest.calls says what one event is). Written by the ingester as it projects
each event, inside its transaction; derived from the journal, so a reindex rebuilds it."""

from __future__ import annotations

import time

from memhooks.providers import valid

MAX_FAILURE = 40  # an error family's name


def count(conn, *, provider: str, project: str | None, at: float, failure: str | None,
          rate_limited: bool, now: float | None = None) -> bool:
    """Count one call. Its time is never later than now; a provider name or failure that
    is not of the expected shape is not counted (False)."""
    now = time.time() if now is None else now
    if not valid(provider):
        return False
    if failure is not None and not (isinstance(failure, str) and 0 < len(failure) <= MAX_FAILURE
                                    and failure.isascii() and failure.isprintable()):
        failure = "tool error"
    at = min(float(at), now) if isinstance(at, (int, float)) and at == at and at > 0 else now
    failed = failure is not None
    limited = failed and rate_limited
    conn.execute(
        "INSERT INTO provider_calls (provider, project, calls, failed, rate_limited, first_at,"
        " last_at, last_failed_at, last_failure, last_rate_limited_at)"
        " VALUES (?1, ?2, 1, ?3, ?4, ?5, ?5, ?6, ?7, ?8)"
        " ON CONFLICT (provider, project) DO UPDATE SET calls = calls + 1,"
        " failed = failed + excluded.failed, rate_limited = rate_limited + excluded.rate_limited,"
        " first_at = min(coalesce(first_at, excluded.first_at), excluded.first_at),"
        " last_at = max(coalesce(last_at, excluded.last_at), excluded.last_at),"
        " last_failure = CASE WHEN excluded.last_failed_at IS NOT NULL AND (last_failed_at IS NULL"
        "  OR excluded.last_failed_at >= last_failed_at) THEN excluded.last_failure ELSE last_failure END,"
        " last_failed_at = max(coalesce(last_failed_at, excluded.last_failed_at),"
        "  coalesce(excluded.last_failed_at, last_failed_at)),"
        " last_rate_limited_at = max(coalesce(last_rate_limited_at, excluded.last_rate_limited_at),"
        "  coalesce(excluded.last_rate_limited_at, last_rate_limited_at))",
        (provider, project or "", int(failed), int(limited), at, at if failed else None,
         failure if failed else None, at if limited else None),
    )
    return True


def summary(conn, project: str | None = None) -> dict[str, dict]:
    """{provider: {calls, failed, rate_limited, last_at, last_failed_at, last_failure,
    last_rate_limited_at}}; {} for a store from before the tally existed."""
    where, args = ("1", ()) if project is None else ("project = ?", (project,))
    try:
        rows = conn.execute(
            "SELECT provider, sum(calls), sum(failed), sum(rate_limited), max(last_at),"
            " max(last_failed_at), max(last_rate_limited_at) FROM provider_calls"
            f" WHERE {where} GROUP BY provider ORDER BY provider", args).fetchall()
    except Exception:  # noqa: BLE001 - a store from before the tally existed
        return {}
    out = {}
    for provider, calls, failed, limited, last, last_failed, last_limited in rows:
        latest = conn.execute(
            "SELECT last_failure FROM provider_calls WHERE provider = ? AND last_failed_at = ?"
            + ("" if project is None else " AND project = ?") + " LIMIT 1",
            (provider, last_failed, *args)).fetchone() if last_failed is not None else None
        out[provider] = {"calls": calls or 0, "failed": failed or 0, "rate_limited": limited or 0,
                         "last_at": last, "last_failed_at": last_failed,
                         "last_failure": latest[0] if latest else None,
                         "last_rate_limited_at": last_limited}
    return out
