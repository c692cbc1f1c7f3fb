"""The serve log: tool calls answered from the store (standard library only).

One row per served call (`outcome = 'served'`) and per identical repeat that
was let through to the live tool (`'insisted'`). It backs two things: the
"agent can insist" rule (an identical call soon after a served one goes live)
and the serving part of `memhooks stats`. Callers own the transaction.
"""

import time

BYTES_PER_TOKEN = 4  # rough estimate used for "tokens saved"


def _day(epoch: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


def recently_served(conn, call_key: str, since: float) -> bool:
    """Whether this exact call was served at or after `since` (and not let through since)."""
    row = conn.execute(
        "SELECT outcome FROM serve_log WHERE call_key = ? AND at >= ? ORDER BY at DESC LIMIT 1",
        (call_key, since),
    ).fetchone()
    return row is not None and row[0] == "served"


def _id_list(ids) -> str:
    """Document IDs as a JSON array (integers only; no json import on the hook path)."""
    return "[" + ", ".join(str(int(i)) for i in ids) + "]"


def record(conn, *, outcome: str, call_key: str, tool: str, tool_name: str | None,
           project: str | None, session_id: str | None, library_id: str | None = None,
           document_ids=(), served_bytes: int = 0, live_bytes: int = 0,
           now: float | None = None) -> int:
    """Log one served (or insisted) call. `live_bytes` estimates what the live call
    would have put in front of the model; the difference, in tokens, is the saving."""
    now = time.time() if now is None else now
    saved = max(0, int(live_bytes) - int(served_bytes)) // BYTES_PER_TOKEN if outcome == "served" else 0
    cur = conn.execute(
        "INSERT INTO serve_log (at, day, outcome, project, session_id, tool, tool_name, library_id,"
        " call_key, document_ids, bytes, tokens_saved) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (now, _day(now), outcome, project or "", session_id, tool, tool_name, library_id, call_key,
         _id_list(document_ids), int(served_bytes), saved),
    )
    return cur.lastrowid


def summary(conn, project: str | None = None, days: int = 30) -> dict:
    """Calls avoided per tool, per library and per day, bytes served, tokens served (the
    served text's bytes / BYTES_PER_TOKEN) and tokens saved (estimates)."""
    where, args = ("outcome = 'served'", ()) if project is None else (
        "outcome = 'served' AND project = ?", (project,))
    try:
        tot = conn.execute(
            f"SELECT count(*), coalesce(sum(bytes), 0), coalesce(sum(tokens_saved), 0)"
            f" FROM serve_log WHERE {where}", args).fetchone()
    except Exception:  # noqa: BLE001 - a store from before serving existed
        return {"calls_avoided": 0, "bytes_served": 0, "tokens_served_est": 0, "tokens_saved_est": 0,
                "insisted": 0,
                "by_tool": [], "by_library": [], "by_day": []}
    insisted = conn.execute(
        "SELECT count(*) FROM serve_log WHERE outcome = 'insisted'"
        + ("" if project is None else " AND project = ?"), args).fetchone()[0]

    def rows(col: str, order: str, limit: int) -> list[dict]:
        return [
            {col: k, "calls_avoided": n, "bytes_served": b or 0,
             "tokens_served_est": (b or 0) // BYTES_PER_TOKEN, "tokens_saved_est": t or 0}
            for k, n, b, t in conn.execute(
                f"SELECT {col}, count(*), sum(bytes), sum(tokens_saved) FROM serve_log"
                f" WHERE {where} GROUP BY {col} ORDER BY {order} LIMIT ?", (*args, limit))
        ]

    return {
        "calls_avoided": tot[0], "bytes_served": tot[1],
        "tokens_served_est": tot[1] // BYTES_PER_TOKEN, "tokens_saved_est": tot[2],
        "insisted": insisted,
        "by_tool": rows("tool", "count(*) DESC, tool", 20),
        "by_library": [r for r in rows("library_id", "count(*) DESC, library_id", 21)
                       if r["library_id"]][:20],
        "by_day": rows("day", "day DESC", days),
    }
