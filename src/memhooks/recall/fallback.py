"""PostToolUse / PostToolUseFailure: when a live docs or page fetch failed, give the model
the store's covered answer instead (standard library only; the capture hook calls it after
journaling the event, so nothing is lost).

A Context7 `resolve-library-id` / `query-docs` / `get-library-docs`, EXA `web_fetch_exa` /
`crawling_exa`, WebFetch or declared docs source's (a row that may be served,
memhooks.doc_sources) call that came back as a failure (PostToolUseFailure always; an
MCP result marked `isError`; a PostToolUse answer that is, whole, one of the tools' error
forms: rate limited, quota, unauthorized, a network error, a 5xx status line or error page,
or empty: memhooks.classify.live_failure; never a no-results answer or documentation,
whatever words they hold: when unsure, the live answer stays)
is looked up as serving would (memhooks.recall.serve `decide`: the same library ID and
version rules, coverage, URL and prompt), with a longer staleness: `MEMHOOKS_FALLBACK_MAX_AGE`
seconds (default 30 days). A hit replaces what the model receives (`updatedToolOutput`, or
`updatedMCPToolOutput` / `additionalContext` on older CLIs: memhooks.recall.cli_version),
with a header that says it is a fallback, why the live call failed and when the answer was
captured; the stored text is fenced (memhooks.egress). Each fallback is one row of
`fallback_log` (memhooks.store.fallback_log). `MEMHOOKS_FALLBACK=0` turns it off.

The decision is bounded by the serve budget (memhooks.recall.budget,
`MEMHOOKS_SERVE_BUDGET_MS`): past it, nothing is given and the live answer stands. A
successful answer costs a few string checks in memhooks.recall.failure: the hook loads this
module (the classifier, serving and the store) only for a result that may be a failure.
"""

import os
import time

from memhooks import classify as verdict
from memhooks._jsonlite import dumps_str
from memhooks.config import project_dir
from memhooks.recall import cli_version
from memhooks.recall.budget import budget_deadline, connect_guarded, install
from memhooks.recall.failure import CHECK, kind_of, response_text, suspect, triage
from memhooks.recall.serve import classify, decide
from memhooks.recall.served import Served, num, q, wrap
from memhooks.store import fallback_log
from memhooks.store.connect import transaction
from memhooks.store.sqlite_file import SCHEMA_VERSION

DEFAULT_MAX_AGE_S = 30 * 86400.0
CONTEXT_MAX_CHARS = 9000  # additionalContext over 10,000 characters goes to a file


def max_age() -> float:
    return num("MEMHOOKS_FALLBACK_MAX_AGE", DEFAULT_MAX_AGE_S)


def live_error(kind: str, tool_response) -> str | None:
    """Why a PostToolUse answer is a failure (an error family), or None when it is an answer:
    memhooks.recall.failure's triage, then the tools' own error forms matched whole and
    anchored (memhooks.classify.live_failure) for what triage cannot tell. A no-results
    answer, or any text with documentation's shape, is an answer whatever words it holds;
    when unsure, the live answer stays."""
    reason = triage(kind, tool_response)
    if reason != CHECK:
        return reason
    stripped = response_text(tool_response).strip()
    reason = verdict.live_failure(stripped)
    if reason is None and kind == "exa-fetch" and verdict.empty_fetch(stripped):
        reason = "empty answer"
    return reason


# ----------------------------------------------------------------------------- the answer

def _age(seconds: float) -> str:
    if seconds >= 86400:
        n, unit = int(seconds // 86400), "day"
    elif seconds >= 3600:
        n, unit = int(seconds // 3600), "hour"
    else:
        n, unit = max(1, int(seconds // 60)), "minute"
    return f"{n} {unit}{'s' * (n != 1)}"


def fallback_head(served: Served, reason: str, live: str, now: float) -> str:
    age = f" ({_age(max(0.0, now - served.at))} ago)" if served.at else ""
    days = max_age() / 86400
    limit = f"{days:g} day{'s' * (days != 1)}" if days >= 1 else _age(max_age())
    return (f"[memhooks fallback] The live tool call failed ({reason}: {q(live, 200)}), so this is "
            f"memhooks' cached answer instead of the live result: {served.what}, captured "
            f"{served.when}{age} {served.asked}. It may be out of date: when the live tool fails, "
            f"memhooks gives cached answers up to {limit} old. For a live answer, repeat the call later.")


def fallback_text(served: Served, reason: str, live: str, now: float, max_chars: int) -> str:
    return wrap(fallback_head(served, reason, live, now), served.body, max_chars,
                "\n[memhooks: cut here; the cached text goes on]")


def _json(value, depth: int = 0) -> str:
    """JSON text of a tool response shape (dicts, lists, strings, numbers), no `json` import."""
    if isinstance(value, str):
        return dumps_str(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else "null"
    if depth > 8:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dumps_str(str(k))}: {_json(v, depth + 1)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_json(v, depth + 1) for v in value) + "]"
    return "null"


def replacement(kind: str, tool_response, text: str, bash: bool = False):
    """The new tool output in the original's shape: content blocks (or a string) for an MCP
    tool, WebFetch's object with `result` replaced, Bash's object with `stdout` replaced."""
    if bash:
        out = dict(tool_response) if isinstance(tool_response, dict) else {}
        out["stdout"], out["stderr"] = text, ""
        return out
    if kind == "webfetch":
        out = dict(tool_response) if isinstance(tool_response, dict) else {}
        out["result"] = text
        return out
    if isinstance(tool_response, str):
        return text
    return [{"type": "text", "text": text}]


def hook_json(event: str, field: str, value) -> str:
    return ('{"hookSpecificOutput": {"hookEventName": ' + dumps_str(event) + ", "
            + dumps_str(field) + ": " + _json(value) + "}}")


# ----------------------------------------------------------------------------- the hook

def fallback_payload(payload: dict, db: str, now: float | None = None,
                     call: tuple[str, dict] | None = None) -> str | None:
    """The hook's stdout (one JSON object) for one PostToolUse / PostToolUseFailure payload,
    or None. Records the fallback it gives. `call`: the (tool name, arguments) a Bash
    command is answered as (a `ctx7 docs` lookup as Context7's query-docs,
    memhooks.ctx7_command): its result is the command's stdout, and a replacement keeps
    the Bash result's shape."""
    now = time.time() if now is None else now
    event, own_name = payload.get("hook_event_name"), payload.get("tool_name")
    tool_name, tool_input = call if call is not None else (own_name, payload.get("tool_input"))
    response = payload.get("tool_response")
    bash = call is not None and own_name == "Bash"
    looked = response.get("stdout") if bash and isinstance(response, dict) else response  # what it printed
    kind = kind_of(tool_name)
    if kind is None or event not in ("PostToolUse", "PostToolUseFailure"):
        return None
    reason: str | None
    if event == "PostToolUseFailure":
        if payload.get("is_interrupt") is True:
            return None  # the user stopped it: no answer wanted
        error = payload.get("error")
        reason, live = "tool error", error if isinstance(error, str) else ""
    else:
        reason = live_error(kind, looked)
        live = response_text(looked)
    if reason is None or not os.path.isfile(db):
        return None
    if classify(tool_name, switches=False) != kind:
        return None  # not a Context7 / EXA server by its name
    project = project_dir(payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    deadline = budget_deadline()
    conn = connect_guarded(db, deadline)
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            return None  # new or behind the migrations (never migrated here)
        served = decide(conn, tool_name, tool_input, project, now, deadline, max_age())
        if served is None or time.monotonic() > deadline:
            return None
        version = cli_version.detect(payload)
        field = cli_version.output_field(event, kind != "webfetch" and not bash, version)
        limit = served.max_chars if field != cli_version.CONTEXT else min(served.max_chars, CONTEXT_MAX_CHARS)
        text = fallback_text(served, reason, live, now, limit)
        value = text if field == cli_version.CONTEXT else replacement(kind, response, text, bash)
        out = hook_json(event, field, value)
        install(conn, deadline)  # the write stops at the budget too
        with transaction(conn):
            tool = served.kind if kind == "declared" else kind  # a docs source by its name
            fallback_log.record(conn, tool=tool, tool_name=own_name, project=project,
                                session_id=session, library_id=served.library_id, reason=reason,
                                field=field, cli_version=version, document_ids=served.doc_ids,
                                served_bytes=len(text.encode("utf-8", "replace")),
                                captured_at=served.at, now=now)
    finally:
        conn.close()
    return out


def fallback_output(raw: bytes, db: str) -> str | None:
    """The PostToolUse hook's answer for its raw stdin: one JSON object, or None."""
    payload = suspect(raw)
    return fallback_payload(payload, db) if payload is not None else None
