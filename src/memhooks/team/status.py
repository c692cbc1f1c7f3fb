"""`memhooks team status` and the doctor's team check: configuration (password masked),
back-off, last push and pull, and (when asked) whether the server answers and accepts
writes."""

from __future__ import annotations

import json
import time
from typing import Any

from memhooks.store import team_local as tl
from memhooks.team.settings import exclusions, masked, team_url, url_source
from memhooks.team.store import (
    MIGRATIONS,
    TeamError,
    applied_migrations,
    classify,
    connect,
    dict_rows,
    driver,
)


def _when(epoch) -> str | None:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch)) if epoch else None


def local_status(conn, db: str | None = None) -> dict:
    url = team_url(db)
    rows = tl.status_rows(conn)
    now = time.time()
    out: dict[str, Any] = {"configured": bool(url), "url": masked(url) if url else None, "source": url_source(db),
           "member_id": (rows.get("member_id") or {}).get("value"),
           "team_id": (rows.get("team_id") or {}).get("value"),
           "exclude": exclusions(db), "local": tl.counts(conn), "backoff": {}, "last": {}}
    for op in ("push", "pull"):
        b = rows.get(f"backoff.{op}")
        if b and b["until"] and b["until"] > now:
            out["backoff"][op] = {"reason": b["value"], "until": _when(b["until"]),
                                  "failures": b["failures"]}
        last = rows.get(f"last.{op}")
        if last:
            try:
                summary = json.loads(last["value"] or "{}")
            except ValueError:
                summary = {}
            out["last"][op] = {"at": _when(last["until"]), **summary}
    return out


def probe(url: str) -> dict:
    """Connect, read the schema and the server version, and try a write that is rolled back."""
    started = time.monotonic()
    try:
        pg = connect(url)
    except Exception as exc:  # noqa: BLE001 - any connect failure is the probe's answer, classified
        err = classify(exc, url)
        return {"reachable": False, "kind": err.kind, "error": str(err)}
    try:
        version = dict_rows(pg).execute("SHOW server_version").fetchone()["server_version"]
        applied = applied_migrations(pg)
        out = {"reachable": True, "server_version": version, "ms": round((time.monotonic() - started) * 1000),
               "schema": f"{len(applied)}/{len(MIGRATIONS)} migrations", "writable": None}
        if len(applied) >= len(MIGRATIONS):
            try:
                with pg.transaction(force_rollback=True):
                    pg.execute("INSERT INTO members (member_id, first_seen) VALUES ('memhooks-probe', 0)"
                               " ON CONFLICT (member_id) DO NOTHING")
                out["writable"] = True
            except Exception as exc:  # noqa: BLE001 - a refused test write is reported, classified
                err = classify(exc, url)
                out["writable"] = False
                out["write_error"] = str(err)
            with pg.transaction():
                row = dict_rows(pg).execute(
                    "SELECT (SELECT count(*) FROM documents) AS documents, (SELECT count(*) FROM members) AS members,"
                    " (SELECT count(*) FROM libraries) AS libraries").fetchone()
            out["team"] = {"documents": row["documents"], "members": row["members"], "libraries": row["libraries"]}
        return out
    except Exception as exc:  # noqa: BLE001 - any failure is the probe's answer, classified
        err = classify(exc, url)
        return {"reachable": True, "kind": err.kind, "error": str(err)}
    finally:
        try:
            pg.close()
        except Exception:  # noqa: BLE001 - closing a broken connection; the probe's answer stands
            pass


def doctor_check(conn, db: str | None = None, *, network: bool = True) -> tuple[str, str]:
    """(status, detail) for `memhooks doctor`: skip when no team store is configured."""
    info = local_status(conn, db)
    url = team_url(db)
    if not url:
        return "skip", "no team store configured (MEMHOOKS_TEAM_URL or `memhooks team connect`)"
    try:
        driver()
    except TeamError as missing:
        return "fail", f"{info['url']}: {missing}"
    parts = [info["url"]]
    status = "ok"
    for op, b in info["backoff"].items():
        status = "warn"
        parts.append(f"{op} backing off until {b['until']} ({b['reason']})")
    if network:
        p = probe(url)
        if not p["reachable"] or p.get("error"):
            return "warn", "; ".join(parts + [p.get("error", "unreachable")])
        parts.append(f"PostgreSQL {p['server_version']}, {p['schema']}, {p['ms']} ms")
        if p.get("writable") is False:
            status = "warn"
            parts.append("read-only: pushes are off (pulls and team search still work)")
        if p.get("team"):
            parts.append(f"{p['team']['documents']} team documents, {p['team']['members']} members")
    for op in ("push", "pull"):
        last = info["last"].get(op)
        if last:
            parts.append(f"last {op} {last['at']}")
    return status, "; ".join(parts)
