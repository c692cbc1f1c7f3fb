"""The PreToolUse hook: answer a repeated docs or page fetch from the store
(memhooks.recall.serve): one JSON object that denies the call with the served text as the
reason, or nothing, which lets the call run. Exit 0 always.

A Bash call (the matcher lets every one through) is looked at only when its raw payload
holds the bytes `ctx7`, and answered only when its command is a `ctx7 docs` lookup
(memhooks.ctx7_command), as Context7's query-docs with the same ID and query; any other
Bash call exits at the byte check, before serving's modules are loaded.

A docs call for an unversioned library ID that the project's lockfile pins is answered as
a call for the versioned ID (memhooks.recall.pin): served from that version's docs, or let
run with the versioned ID through `updatedInput` (for `ctx7 docs`, the rewritten command)."""

from memhooks._jsonlite import loads
from memhooks.config import MAX_SERVE_STDIN as MAX_STDIN
from memhooks.config import db_path, switched_off
from memhooks.ctx7_command import answered_as, bash_lookup, with_library_id
from memhooks.entry._boundary import emit, guard, refuse
from memhooks.entry._input import bash_call, not_utf8, read_stdin

NAME = "pre-tool-use"


def _run() -> int:
    if switched_off("MEMHOOKS_SERVE"):
        return 0

    raw, total = read_stdin(MAX_STDIN)
    bash = bash_call(raw)
    if bash and b"ctx7" not in raw:
        return 0  # any other Bash command: no parse, no answer
    why = f"payload of {total} bytes is over the {MAX_STDIN} byte cap" if total > MAX_STDIN else not_utf8(raw)
    if why:
        if not bash:
            refuse(NAME, f"{why}: not served, the call runs")
        return 0
    try:
        payload = loads(raw.decode("utf-8"))  # too deep a value: RecursionError, one line at the boundary
    except ValueError as exc:
        if not bash:
            refuse(NAME, f"payload is not JSON ({exc}): not served, the call runs")
        return 0
    if not isinstance(payload, dict):
        return 0
    call = rewrite = None
    if bash:
        cmd = bash_lookup(payload)
        call = answered_as(cmd) if cmd is not None else None
        if cmd is None or call is None:
            return 0  # any other Bash command, or `ctx7 library` (captured, not served)
        own = payload["tool_input"]  # a dict: bash_lookup read its command

        def rewrite(library_id: str) -> dict | None:
            """A pinned version: the same command asking for that ID, which the hook approves
            (`permissionDecision: allow`), so only a plain `ctx7 docs …`: never one behind a
            package runner (`npx` fetches and runs a package) or a variable assignment
            (`NODE_OPTIONS=…` runs code), which the user's own permissions must decide."""
            if cmd.words[0] != "ctx7":
                return None
            return {**own, "command": with_library_id(cmd, library_id)}
    from memhooks.recall.serve import hook_json, serve_payload  # past the Bash checks

    result = serve_payload(payload, db_path(), call=call, rewrite=rewrite)
    emit(hook_json(result) if result else None)
    return 0


def main(args=()) -> int:
    return guard(NAME, _run)
