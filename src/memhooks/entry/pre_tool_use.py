"""The PreToolUse hook: answer a repeated docs or page fetch from the store
(memhooks.recall.serve): one JSON object that denies the call with the served text as the
reason, or nothing, which lets the call run. Exit 0 always.

A Bash call (the matcher lets every one through) is looked at only when its raw payload
holds the bytes `ctx7`, and answered only when its command is a `ctx7 docs` lookup
(memhooks.recall.ctx7_cli); any other Bash call exits at the byte check, before serving's
modules are loaded."""

from memhooks.config import MAX_SERVE_STDIN as MAX_STDIN
from memhooks.config import db_path, switched_off
from memhooks.entry._boundary import emit, guard, refuse
from memhooks.entry._input import bash_call, not_utf8, read_stdin

NAME = "pre-tool-use"


def _run() -> int:
    if switched_off("MEMHOOKS_SERVE"):
        return 0

    raw, total = read_stdin(MAX_STDIN)
    if bash_call(raw):
        if b"ctx7" not in raw or total > MAX_STDIN or not_utf8(raw):
            return 0  # any other Bash command: no parse, no answer
        from memhooks.recall.ctx7_cli import hook_json, lookup  # a Bash call that may run ctx7

        call = lookup(raw)
        result = call.serve(db_path()) if call is not None else None
        emit(hook_json(result) if result else None)
        return 0
    why = f"payload of {total} bytes is over the {MAX_STDIN} byte cap" if total > MAX_STDIN else not_utf8(raw)
    if why:
        refuse(NAME, f"{why}: not served, the call runs")
        return 0

    from memhooks.recall.serve import hook_json, loads, serve_payload  # past the Bash byte check

    try:
        payload = loads(raw.decode("utf-8"))  # too deep a value: RecursionError, one line at the boundary
    except ValueError as exc:
        refuse(NAME, f"payload is not JSON ({exc}): not served, the call runs")
        return 0
    if isinstance(payload, dict):
        result = serve_payload(payload, db_path())
        emit(hook_json(result) if result else None)
    return 0


def main(args=()) -> int:
    return guard(NAME, _run)
