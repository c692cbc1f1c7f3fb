"""The PostToolUse / PostToolUseFailure hook: journal the raw payload first (nothing is lost),
start the detached ingester, then answer a failed live call from the store when it can
(memhooks.recall.failure triages, memhooks.recall.fallback answers): one JSON object on stdout, or nothing. Exit 0 always.

A Bash call (the matcher lets every one through) is journaled only when its command is a
Context7 CLI lookup (`ctx7 library|docs …`, memhooks.recall.ctx7_cli); any other Bash call
is never journaled and gets no answer, and one whose raw payload lacks the bytes `ctx7`
exits at that byte check, before any parse."""

from memhooks.capture.hooks import journal, spawn_ingest
from memhooks.capture.tool_calls import metadata_only, tool_name_of
from memhooks.config import MAX_EVENT_BYTES, db_path
from memhooks.entry._boundary import emit, guard, refuse
from memhooks.entry._input import bash_call, hostile, read_stdin
from memhooks.gate import blocked, hook_project
from memhooks.recall.worth_a_look import worth_a_look

NAME = "post-tool-use"


def _run() -> int:
    raw, total = read_stdin(MAX_EVENT_BYTES)
    cli = None
    if bash_call(raw):
        if b"ctx7" not in raw or hostile(raw, total, MAX_EVENT_BYTES):
            return 0  # any other Bash command (or one too large to read): never journaled
        from memhooks.recall.ctx7_cli import lookup  # only a Bash call that may run ctx7

        cli = lookup(raw)
        if cli is None:
            return 0
    db = db_path()
    if blocked(db, hook_project(raw)):
        return 0  # excluded or paused: nothing journaled
    tool = tool_name_of(raw)
    # A ctx7 lookup is captured for what it runs, whatever its tool's name (Bash) says.
    meta = None if cli is not None else metadata_only(raw, total, "PostToolUse", tool)
    journal(db, raw, total, "PostToolUse", tool, meta)
    spawn_ingest(db)
    if cli is not None:
        emit(cli.fallback(db))
        return 0
    why = hostile(raw, total, MAX_EVENT_BYTES)
    if why:
        refuse(NAME, f"{why}: journaled (over the cap: as a stub), no fallback answer")
        return 0
    if not worth_a_look(raw):
        return 0  # an answer (docs with a code block...), or no tool memhooks answers
    from memhooks.recall.failure import suspect  # one JSON parse: only a payload worth it

    payload = suspect(raw)
    if payload is not None:  # the live call may have failed: the classifier and the store
        from memhooks.recall.fallback import fallback_payload

        emit(fallback_payload(payload, db))
    return 0


def main(args=()) -> int:
    return guard(NAME, _run)
