"""What SessionStart tells the agent: the context text, the hook's JSON, whether the
Context7 API is backing off, and the lockfile fingerprint that tells whether it may answer
from tier1 (standard library only; the fast path and the warm share it)."""

import os
import sqlite3
import sys
import time

from memhooks._jsonlite import dumps_str
from memhooks.config import offline
from memhooks.egress import clean, one_line
from memhooks.names import checked_library_id, valid_library_id, valid_name, valid_version
from memhooks.store.queries import RETRY_KEY as RETRY_KEY  # the API backoff's api_state key
from memhooks.store.queries import api_retry_row, document_count

MAX_CONTEXT = 1500
HINT = ("Use these Context7 IDs directly (skip resolve-library-id), and run "
        "`{cmd} ID TOPIC` before calling Context7 query-docs: it prints cached docs "
        "(empty output = miss).")


def lookup_command(name: str, python: str | None = None, package: str | None = None) -> str:
    """The one form in which memhooks names `name` (lc-cache-lookup or lc-cache-lookup-docs)
    for the agent to run, without its arguments: SessionStart tells the agent this command and
    `memhooks install --allow` writes the rule that covers it (memhooks.setup.entries), so the
    agent's call never asks for approval.

    The bin/ shim beside the package (a plugin, from a marketplace or `--plugin-dir`, or a
    checkout), run by bash; else the console script beside `python` (a venv, activated or not,
    uv tool, pipx), by its absolute path; both quoted. The bare name only when neither
    exists (then no rule is written either). `python` defaults to this interpreter and
    `package` to this memhooks package folder."""
    package = package or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shim = os.path.join(os.path.dirname(os.path.dirname(package)), "bin", name)
    if os.path.isfile(shim):
        return f'bash "{shim}"'
    script = os.path.join(os.path.dirname(python or sys.executable), name)
    if os.path.isfile(script):
        return f'"{script}"'
    return name


def _docs_command() -> str:
    """How the agent can run lc-cache-lookup-docs (see lookup_command)."""
    return lookup_command("lc-cache-lookup-docs")


PARTIAL = "partial"  # warm_state.fingerprint of a scan a budget cut short: never matches


def _checked(e: dict) -> dict | None:
    """An entry for the context with every value checked against its grammar, or None."""
    name, eco = e.get("name"), e.get("ecosystem")
    if not valid_name(name, eco if eco in ("npm", "pypi", "go", "crates", "gems", "composer") else None):
        return None
    lid = checked_library_id(e.get("library_id"))
    if lid is None:
        return None
    version = e.get("version") if valid_version(e.get("version")) else None
    vid = e.get("versioned_id") if valid_library_id(e.get("versioned_id")) else None
    was = e.get("was") if valid_version(e.get("was")) and version else None
    return {"name": name, "version": version, "library_id": lid, "versioned_id": vid,
            "cached": bool(e.get("cached")), "suggested": bool(e.get("suggested")), "was": was}


SUGGESTED_HEAD = ("Suggested by the team store (unverified: another team member's answer that nothing "
                  "on this machine confirms; check it with resolve-library-id before using it):")


def _suggestions(entries: list[dict], budget: int) -> list[str]:
    """The unverified team suggestions as a short section (checked values only), or []."""
    lines: list[str] = []
    budget -= len(SUGGESTED_HEAD) + 1
    for e in entries:
        label = e["name"] + (f"@{e['version']}" if e.get("version") else "")
        line = f"- {label} → {e['library_id']} (suggested by the team store, unverified)"
        if len(line) + 1 > budget:
            break
        lines.append(line)
        budget -= len(line) + 1
    return [SUGGESTED_HEAD, *lines] if lines else []


def build_context(entries: list[dict], note: str = "") -> str:
    """`name@version → /org/repo` lines plus the hint, at most MAX_CONTEXT chars. Only
    checked values (memhooks.names grammars) reach it. `(cached)` marks an ID served from
    tier1 that an earlier session resolved. With nothing resolved: what is cached (`note`)."""
    checked = [c for c in (_checked(e) for e in entries) if c is not None]
    resolved = [c for c in checked if not c["suggested"]]
    suggested = [c for c in checked if c["suggested"]]
    if not resolved:
        head = "memhooks: no Context7 library IDs are cached for this project's dependencies yet."
        extra = _suggestions(suggested, MAX_CONTEXT - len(head) - len(note) - 2)
        return clean("\n".join(x for x in (head, note, *extra) if x)[:MAX_CONTEXT])
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
        if e.get("was"):  # the lockfile changed since the last session
            line += f" (was {e['was']} until this session)"
        line += mark
        if len(line) + 1 > budget:
            line = f"- {label} → {e['library_id']}{mark}"
            if len(line) + 1 > budget:
                break
        lines.append(line)
        budget -= len(line) + 1
    extra = _suggestions(suggested, budget) if suggested else []
    return clean("\n".join([head, *lines, *tail, *extra])[:MAX_CONTEXT])


def api_backoff(conn, now: float) -> tuple[str, float] | None:
    """(why, until) while the warm is backing off the Context7 API, else None."""
    return backoff_of(api_retry_row(conn), now)


def backoff_of(row, now: float) -> tuple[str, float] | None:
    """(why, until) of an api_state row (value, until) still in force at `now`, else None."""
    if not row or not row["until"] or row["until"] <= now:
        return None
    return (str(row["value"] or ""), float(row["until"]))


def status_note(conn, now: float, *, documents: bool = True) -> str:
    """What the agent can still use: cached documents, and whether Context7 is
    rate-limited (or unreachable) until a time. One or two short lines."""
    return note_of(lambda: document_count(conn), api_backoff(conn, now), documents=documents)


def note_of(count_documents, backoff: tuple[str, float] | None, *, documents: bool = True) -> str:
    """status_note's text from its parts: `count_documents()` (called only when the note
    mentions documents) and the API backoff (api_backoff)."""
    parts = []
    if documents:
        try:
            n = count_documents()
        except sqlite3.Error:  # a store that cannot count (damaged, old): the note says nothing cached
            n = 0
        if n:
            parts.append(f"{n} cached documentation page{'s' if n != 1 else ''} from earlier "
                         "sessions: search them with the memhooks MCP tool search_documents "
                         "before fetching docs again.")
        else:
            parts.append("No documentation is cached yet.")
    if backoff:
        when = time.strftime("%H:%M UTC", time.gmtime(backoff[1]))
        if backoff[0] == "429":
            parts.append(f"Context7 is rate-limited until {when}: prefer the cached docs until then.")
        else:
            parts.append(f"The Context7 API was not usable ({one_line(backoff[0], 80)}); memhooks "
                         f"tries again after {when}.")
    return " ".join(parts)


def hook_json(context: str) -> str:
    # json.dumps(..., ensure_ascii=False) of this shape, without importing json (and re)
    return ('{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": '
            + dumps_str(context) + "}}")


def api_blocked(conn, now: float, *, retry_unreachable: bool = False) -> bool:
    """Offline, or backing off (after a 429; or after the API was unreachable,
    unless `retry_unreachable`, as for a warm a person asked for)."""
    if offline():
        return True
    return blocked_by(api_backoff(conn, now), retry_unreachable=retry_unreachable)


def blocked_by(backoff: tuple[str, float] | None, *, retry_unreachable: bool = False) -> bool:
    """api_blocked for a known backoff (online)."""
    if backoff is None:
        return False
    # a warm a person asked for retries any fault but a 429 (Retry-After is the API's word)
    return not (retry_unreachable and backoff[0] != "429")


def fingerprint(root: str, files: list[str], dirs: list[str]) -> str:
    """The lockfile fingerprint, stat only, no reads: (path, mtime_ns, size) of every manifest
    read and (path, mtime_ns) of every folder visited. A folder's mtime changes when an entry
    is added or removed, so a new manifest changes the fingerprint too. The fingerprint is the
    listing itself (a few KB), compared exactly: no hash import on the fast path, and no
    collisions. It lives here, in a module the fast path loads anyway (the warm saves it)."""
    rootp = os.fspath(root)
    parts = []
    for tag, names in (("f", files), ("d", dirs)):
        for rel in sorted(set(names)):
            try:
                st = os.stat(os.path.join(rootp, rel))
                stamp = f"{st.st_mtime_ns}:{st.st_size}" if tag == "f" else str(st.st_mtime_ns)
            except OSError:
                stamp = "-"
            parts.append(f"{tag}:{rel}:{stamp}")
    return "\n".join(parts)
