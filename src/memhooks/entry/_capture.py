"""The capture hook's work once its payload is worth a look (memhooks.entry.post_tool_use reads
stdin and lets any other Bash call go first): journal the raw payload first (nothing is lost),
start the detached ingester, then answer a failed live call from the store when it can
(memhooks.recall.failure triages, memhooks.recall.fallback answers): one JSON object on stdout,
or nothing.

A Bash call (the matcher lets every one through) is journaled only when its command is a
Context7 CLI lookup (`ctx7 library|docs …`, memhooks.ctx7_command), and a failed `ctx7 docs`
is answered as Context7's query-docs would be; any other Bash call is never journaled and
gets no answer, and one whose raw payload lacks the bytes `ctx7` exits at that byte check,
before any parse."""

from memhooks._jsonlite import loads
from memhooks.capture.hooks import journal, spawn_ingest
from memhooks.capture.tool_calls import metadata_only, tool_name_of
from memhooks.config import MAX_EVENT_BYTES, db_path, switched_off
from memhooks.ctx7_command import answered_as, bash_lookup
from memhooks.entry._boundary import emit, refuse
from memhooks.entry._input import bash_call, hostile
from memhooks.gate import blocked, hook_project
from memhooks.recall.worth_a_look import worth_a_look

NAME = "post-tool-use"


def _bash(raw: bytes, total: int) -> dict | None:
    """The payload of a Bash call that runs a ctx7 lookup, or None (never journaled)."""
    if b"ctx7" not in raw or hostile(raw, total, MAX_EVENT_BYTES):
        return None  # any other Bash command (or one too large to read)
    try:
        payload = loads(raw.decode("utf-8"))
    except ValueError:
        return None
    return payload if bash_lookup(payload) is not None else None


def run(raw: bytes, total: int) -> int:
    bash = bash_call(raw)
    lookup = _bash(raw, total) if bash else None
    if bash and lookup is None:
        return 0  # any other Bash command: not journaled, no answer
    db = db_path()
    if blocked(db, hook_project(raw)):
        return 0  # excluded or paused: nothing journaled
    tool = tool_name_of(raw)
    # a ctx7 lookup is journaled whole (its tool's name, Bash, is not a captured one)
    meta = None if lookup is not None else metadata_only(raw, total, "PostToolUse", tool)
    journal(db, raw, total, "PostToolUse", tool, meta)
    spawn_ingest(db)
    call = None
    payload: dict | None = lookup
    if lookup is not None:
        cmd = bash_lookup(lookup)
        call = answered_as(cmd) if cmd is not None else None
        if call is None or switched_off("MEMHOOKS_FALLBACK"):
            return 0  # `ctx7 library`: captured, never answered
    else:
        why = hostile(raw, total, MAX_EVENT_BYTES)
        if why:
            refuse(NAME, f"{why}: journaled (over the cap: as a stub), no fallback answer")
            return 0
        if not worth_a_look(raw):
            return 0  # an answer (docs with a code block...), or no tool memhooks answers
        from memhooks.recall.failure import suspect  # one JSON parse: only a payload worth it

        payload = suspect(raw)
    if payload is None:
        return 0
    # the live call may have failed: the classifier and the store
    from memhooks.recall.fallback import fallback_payload

    emit(fallback_payload(payload, db, call=call))
    return 0

