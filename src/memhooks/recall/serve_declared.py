"""The serve decision for a declared docs source (memhooks.doc_sources; standard library
only; memhooks.recall.serve calls it): a repeated call of a row that says `serve = true`,
with the same key (the same arguments the row names, on the same server and tool), answered
with every document the newest capture of that call stored, within the web TTL
(`MEMHOOKS_SERVE_WEB_TTL_S`). `max_age` (the fallback's staleness) widens the TTL."""

from memhooks import doc_sources
from memhooks._jsonlite import loads_object
from memhooks.recall.render import when_utc
from memhooks.recall.served import Served, num, q
from memhooks.store import provenance, queries

PART_JOIN = "\n\n"


def answer_declared(conn, row: "doc_sources.Row", server: str, tool: str, tool_input: dict, now: float,
                    max_chars: int, max_age: float | None = None) -> Served | None:
    source = doc_sources.call_source(row, server, tool, tool_input)
    if source is None:
        return None
    ttl = num("MEMHOOKS_SERVE_WEB_TTL_S", num("MEMHOOKS_TIER2_TTL_S", 4 * 3600.0))
    rows = queries.declared_captures(conn, row.name, source, now - max(ttl, max_age or 0.0))
    if not rows:
        return None
    event = rows[0]["event_id"]
    parts: dict = {}
    count = None
    for r in rows:
        if r["event_id"] != event:
            continue
        meta = loads_object(r["metadata"])
        part, total = meta.get("part"), meta.get("parts")
        if not isinstance(part, int) or not isinstance(total, int) or isinstance(part, bool):
            return None
        if count is None:
            count = total
        if total != count or part in parts:
            return None
        parts[part] = r
    if count is None or sorted(parts) != list(range(count)):
        return None  # a part was refused, forgotten or pruned: the call goes live
    ordered = [parts[i] for i in range(count)]
    ids = [r["id"] for r in ordered]
    at = rows[0]["at"]
    body = PART_JOIN.join(r["content"] or "" for r in ordered)
    args = loads_object(ordered[0]["metadata"]).get("args")
    label = ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else ""
    asked = f"for {q(label or tool, 300)}{provenance.team_note(conn, ids)}"
    return Served(row.name, f"{q(row.name, 40)} {q(tool, 100)} ({count} document{'s' * (count > 1)})",
                  when_utc(at), asked, body, max_chars, ids, None,
                  sum(r["bytes"] or 0 for r in ordered), at)
