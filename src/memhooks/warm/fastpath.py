"""SessionStart: the fast path and the context text (standard library only).

When the project's lockfile fingerprint is unchanged and every ranked name
has a fresh tier1 entry (or the network is off limits), the answer comes from
tier1 without scanning and without network. Otherwise memhooks.warm.resolve runs.
"""

from __future__ import annotations

import json
import os
import time

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


def build_context(entries: list[dict]) -> str:
    """`name@version → /org/repo` lines plus the hint, at most MAX_CONTEXT chars."""
    resolved = [e for e in entries if e.get("library_id")]
    if not resolved:
        return ""
    head = "memhooks: Context7 library IDs for this project's dependencies (cached):"
    hint = HINT.format(cmd=_docs_command())
    lines: list[str] = []
    budget = MAX_CONTEXT - len(head) - len(hint) - 2
    for e in resolved:
        label = e["name"] + (f"@{e['version']}" if e.get("version") else "")
        line = f"- {label} → {e['library_id']}"
        if e.get("versioned_id"):
            line += f" (this version: {e['versioned_id']})"
        if len(line) + 1 > budget:
            line = f"- {label} → {e['library_id']}"
            if len(line) + 1 > budget:
                break
        lines.append(line)
        budget -= len(line) + 1
    return "\n".join([head, *lines, hint])


def hook_json(context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                              "additionalContext": context}}, ensure_ascii=False)


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
        entries.append({"name": dep["name"], "version": dep.get("version"),
                        "library_id": row[0], "versioned_id": row[1]})
    return entries, complete


def api_blocked(conn, now: float, *, retry_unreachable: bool = False) -> bool:
    """Offline, or backing off (after a 429; or after the API was unreachable,
    unless `retry_unreachable`, as for a warm a person asked for)."""
    from memhooks.config import offline

    if offline():
        return True
    row = conn.execute(
        "SELECT until, value FROM api_state WHERE key = 'context7.retry_after'").fetchone()
    if not row or not row[0] or row[0] <= now:
        return False
    return not (retry_unreachable and row[1] == "unreachable")


def fast_answer(conn, project: str) -> str | None:
    """The context from tier1 when nothing changed, else None (the caller warms)."""
    from memhooks.warm.fingerprint import fingerprint

    row = conn.execute(
        "SELECT fingerprint, files, dirs, ranked FROM warm_state WHERE project = ?", (project,)
    ).fetchone()
    if row is None:
        return None
    if fingerprint(project, json.loads(row[1]), json.loads(row[2])) != row[0]:
        return None
    now = time.time()
    entries, complete = tier1_entries(conn, project, json.loads(row[3]), now)
    if not complete and not api_blocked(conn, now):
        return None
    return build_context(entries)


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
    return hook_json(context) if context else None


def session_start_output(db: str, project: str) -> str | None:
    """One JSON object for the SessionStart hook, or None to print nothing."""
    from memhooks.store.connect import connect

    if not project or not os.path.isdir(project):
        return None
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
    return hook_json(context) if context else None
