"""The fallback log: failed live tool calls answered from the store (standard library only).

One row per fallback the PostToolUse hook gave (memhooks.recall.fallback): the tool kind,
the library, why the live call failed, the output field that carried the answer, the CLI
version it was chosen for, and when the oldest document used was captured. It backs the
"fallbacks" block of `memhooks stats`. Callers own the transaction.
"""

import time


def record(conn, *, tool: str, tool_name: str | None, project: str | None,
           session_id: str | None, library_id: str | None, reason: str | None, field: str,
           cli_version: str | None, document_ids=(), served_bytes: int = 0,
           captured_at: float | None = None, now: float | None = None) -> int:
    now = time.time() if now is None else now
    ids = "[" + ", ".join(str(int(i)) for i in document_ids) + "]"  # no json on the hook path
    cur = conn.execute(
        "INSERT INTO fallback_log (at, day, project, session_id, tool, tool_name, library_id,"
        " reason, field, cli_version, document_ids, bytes, captured_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (now, time.strftime("%Y-%m-%d", time.gmtime(now)), project or "", session_id, tool,
         tool_name, library_id, (reason or "")[:80], field, cli_version, ids, int(served_bytes),
         captured_at),
    )
    return cur.lastrowid


EMPTY = {"fallbacks": 0, "bytes": 0, "by_tool": [], "by_library": [], "by_day": [],
         "by_reason": [], "by_field": []}


def summary(conn, project: str | None = None, days: int = 30) -> dict:
    """Fallbacks given, per tool, library, day, reason and output field."""
    where, args = ("1", ()) if project is None else ("project = ?", (project,))
    try:
        n, size = conn.execute(f"SELECT count(*), coalesce(sum(bytes), 0) FROM fallback_log"
                               f" WHERE {where}", args).fetchone()
    except Exception:  # noqa: BLE001 - a store from before fallbacks existed
        return {k: (list(v) if isinstance(v, list) else v) for k, v in EMPTY.items()}

    def rows(col: str, order: str, limit: int) -> list[dict]:
        return [{col: k, "fallbacks": c, "bytes": b or 0} for k, c, b in conn.execute(
            f"SELECT {col}, count(*), sum(bytes) FROM fallback_log WHERE {where}"  # noqa: S608
            f" GROUP BY {col} ORDER BY {order} LIMIT ?", (*args, limit))]

    return {
        "fallbacks": n, "bytes": size,
        "by_tool": rows("tool", "count(*) DESC, tool", 20),
        "by_library": [r for r in rows("library_id", "count(*) DESC, library_id", 21)
                       if r["library_id"]][:20],
        "by_day": rows("day", "day DESC", days),
        "by_reason": [r for r in rows("reason", "count(*) DESC, reason", 20) if r["reason"]],
        "by_field": rows("field", "count(*) DESC, field", 5),
    }
