"""SessionStart: the fast path and the context text (standard library only).

When the project's lockfile fingerprint is unchanged and every ranked name
has a fresh tier1 entry (or the network is off limits), the answer comes from
tier1 without scanning and without network. Otherwise memhooks.warm.resolve runs.
"""

from __future__ import annotations

import os
import time

from memhooks._jsonlite import dumps_str, loads

MAX_CONTEXT = 1500
HINT = ("Use these Context7 IDs directly (skip resolve-library-id), and run "
        "`{cmd} ID TOPIC` before calling Context7 query-docs: it prints cached docs "
        "(empty output = miss).")


def _docs_command() -> str:
    """How the agent can run lc-cache-lookup-docs: the plugin's bin/ shim, else the
    console script beside this Python, else the bare name on PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    shim = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(here))), "bin", "lc-cache-lookup-docs")
    if os.path.isfile(shim):
        return f'bash "{shim}"'
    import sys

    script = os.path.join(os.path.dirname(sys.executable), "lc-cache-lookup-docs")
    if os.path.isfile(script) and os.path.dirname(script) not in os.environ.get("PATH", "").split(":"):
        return f'"{script}"'
    return "lc-cache-lookup-docs"


RETRY_KEY = "context7.retry_after"
PARTIAL = "partial"  # warm_state.fingerprint of a scan a budget cut short: never matches


def _checked(e: dict) -> dict | None:
    """An entry for the context with every value checked against its grammar, or None."""
    from memhooks.names import checked_library_id, valid_library_id, valid_name, valid_version

    name, eco = e.get("name"), e.get("ecosystem")
    if not valid_name(name, eco if eco in ("npm", "pypi", "go", "crates", "gems", "composer") else None):
        return None
    lid = checked_library_id(e.get("library_id"))
    if lid is None:
        return None
    version = e.get("version") if valid_version(e.get("version")) else None
    vid = e.get("versioned_id") if valid_library_id(e.get("versioned_id")) else None
    return {"name": name, "version": version, "library_id": lid, "versioned_id": vid,
            "cached": bool(e.get("cached"))}


def build_context(entries: list[dict], note: str = "") -> str:
    """`name@version → /org/repo` lines plus the hint, at most MAX_CONTEXT chars. Only
    checked values (memhooks.names grammars) reach it. `(cached)` marks an ID served from
    tier1 that an earlier session resolved. With nothing resolved: what is cached (`note`)."""
    resolved = [c for c in (_checked(e) for e in entries) if c is not None]
    if not resolved:
        head = "memhooks: no Context7 library IDs are cached for this project's dependencies yet."
        return "\n".join(x for x in (head, note) if x)[:MAX_CONTEXT]
    head = "memhooks: Context7 library IDs for this project's dependencies:"
    hint = HINT.format(cmd=_docs_command())
    tail = [hint] + ([note] if note else [])
    lines: list[str] = []
    budget = MAX_CONTEXT - len(head) - sum(len(t) + 1 for t in tail) - 1
    if budget < 200 and note:  # the note is optional; the IDs are not
        tail, budget = [hint], budget + len(note) + 1
    for e in resolved:
        label = e["name"] + (f"@{e['version']}" if e.get("version") else "")
        mark = " (cached)" if e["cached"] else ""
        line = f"- {label} → {e['library_id']}"
        if e.get("versioned_id"):
            line += f" (this version: {e['versioned_id']})"
        line += mark
        if len(line) + 1 > budget:
            line = f"- {label} → {e['library_id']}{mark}"
            if len(line) + 1 > budget:
                break
        lines.append(line)
        budget -= len(line) + 1
    return "\n".join([head, *lines, *tail])[:MAX_CONTEXT]


def api_backoff(conn, now: float) -> tuple[str, float] | None:
    """(why, until) while the warm is backing off the Context7 API, else None."""
    try:
        row = conn.execute("SELECT value, until FROM api_state WHERE key = ?", (RETRY_KEY,)).fetchone()
    except Exception:  # noqa: BLE001 - a store without the table: no backoff
        return None
    if not row or not row[1] or row[1] <= now:
        return None
    return (str(row[0] or ""), float(row[1]))


def status_note(conn, now: float, *, documents: bool = True) -> str:
    """What the agent can still use: cached documents, and whether Context7 is
    rate-limited (or unreachable) until a time. One or two short lines."""
    parts = []
    if documents:
        try:
            n = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        except Exception:  # noqa: BLE001
            n = 0
        if n:
            parts.append(f"{n} cached documentation page{'s' if n != 1 else ''} from earlier "
                         "sessions: search them with the memhooks MCP tool search_documents "
                         "before fetching docs again.")
        else:
            parts.append("No documentation is cached yet.")
    backoff = api_backoff(conn, now)
    if backoff:
        when = time.strftime("%H:%M UTC", time.gmtime(backoff[1]))
        if backoff[0] == "429":
            parts.append(f"Context7 is rate-limited until {when}: prefer the cached docs until then.")
        else:
            parts.append(f"The Context7 API was not usable ({backoff[0]}); memhooks tries again "
                         f"after {when}.")
    return " ".join(parts)


def hook_json(context: str) -> str:
    # json.dumps(..., ensure_ascii=False) of this shape, without importing json (and re)
    return ('{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": '
            + dumps_str(context) + "}}")


def tier1_entries(conn, project: str, ranked: list[dict], now: float) -> tuple[list[dict], bool]:
    """(entries for the ranked names, whether every name has a fresh answer)."""
    from memhooks.names import normalize

    entries, complete = [], True
    for dep in ranked:
        key = normalize(dep["name"], dep.get("ecosystem"))
        row = conn.execute(
            "SELECT library_id, versioned_id, expires_at FROM tier1 WHERE project = ? AND name_key = ?",
            (project, key),
        ).fetchone()
        if row is None or row[2] <= now:
            complete = False
            continue
        entries.append({"name": dep["name"], "ecosystem": dep.get("ecosystem"),
                        "version": dep.get("version"), "library_id": row[0],
                        "versioned_id": row[1], "cached": True})
    return entries, complete


def api_blocked(conn, now: float, *, retry_unreachable: bool = False) -> bool:
    """Offline, or backing off (after a 429; or after the API was unreachable,
    unless `retry_unreachable`, as for a warm a person asked for)."""
    from memhooks.config import offline

    if offline():
        return True
    backoff = api_backoff(conn, now)
    if backoff is None:
        return False
    # a warm a person asked for retries any fault but a 429 (Retry-After is the API's word)
    return not (retry_unreachable and backoff[0] != "429")


def fast_answer(conn, project: str) -> str | None:
    """The context from tier1 when nothing changed, else None (the caller warms)."""
    from memhooks.warm.fingerprint import fingerprint

    row = conn.execute(
        "SELECT fingerprint, files, dirs, ranked FROM warm_state WHERE project = ?", (project,)
    ).fetchone()
    if row is None:
        return None
    if row[0] == PARTIAL or fingerprint(project, loads(row[1]), loads(row[2])) != row[0]:
        return None
    now = time.time()
    entries, complete = tier1_entries(conn, project, loads(row[3]), now)
    if not complete and not api_blocked(conn, now):
        return None
    resolved = any(e.get("library_id") for e in entries)
    return build_context(entries, note=status_note(conn, now, documents=not resolved))


def fast_output(db: str, project: str) -> str | None:
    """The hook's JSON from tier1 when the lockfiles are unchanged (standard library only),
    or None when a warm is needed."""
    from memhooks.store.connect import connect

    if not project or not os.path.isdir(project):
        return None
    conn = connect(db)
    try:
        context = fast_answer(conn, project)
    finally:
        conn.close()
    return hook_json(context) if context is not None else None


def status_output(db: str, project: str | None = None) -> str:
    """The hook's JSON when no warm answer is available (no project, the warm failed or ran
    out of time): what is cached and whether Context7 is rate-limited. Never raises."""
    context = ""
    try:
        from memhooks.store.connect import connect

        conn = connect(db)
        try:
            context = build_context([], note=status_note(conn, time.time()))
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - a hook never breaks the session
        context = "memhooks: no Context7 library IDs are cached for this project's dependencies yet."
    return hook_json(context)


def session_start_output(db: str, project: str) -> str:
    """One JSON object for the SessionStart hook, every time."""
    from memhooks.store.connect import connect

    if not project or not os.path.isdir(project):
        return status_output(db, project)
    conn = connect(db)
    try:
        context = fast_answer(conn, project)
        if context is None:
            from memhooks.warm.resolve import warm

            context = warm(conn, project).context
            from memhooks.team.runner import spawn  # detached team pull, when configured

            spawn("pull", db, project)
    finally:
        conn.close()
    return hook_json(context)
