"""The Context7 CLI through Bash, for the PreToolUse and PostToolUse hooks (standard library
only; loaded only for a Bash call whose payload holds the bytes `ctx7`).

A Bash call is a Context7 lookup when its command is exactly one `ctx7 library …` /
`ctx7 docs …` call (memhooks.ctx7_command); any other command is never touched. A `docs`
lookup is answered as Context7's `query-docs` with the same library ID and query:

* PreToolUse serves a repeat from the store (memhooks.recall.serve, the same rules and
  switches, `MEMHOOKS_SERVE_CONTEXT7` included; "the agent insists" is keyed by the Bash
  command);
* PostToolUse / PostToolUseFailure give the store's answer when the live command failed
  (memhooks.recall.fallback): a nonzero exit arrives as PostToolUseFailure (`error` is
  `Exit code 1` and what the CLI printed, e.g. `✖ HTTP error 429`, `✖ fetch failed`), so the
  answer is `additionalContext` beside the error; an error text printed with exit 0 is
  replaced (`updatedToolOutput`, the Bash result's own shape with `stdout` replaced).

A `library` lookup is captured (tier1) but not served: `ctx7 docs` is the call that costs.
"""

from memhooks._jsonlite import loads
from memhooks.ctx7_command import Ctx7Command, parse
from memhooks.recall.fallback import fallback_payload
from memhooks.recall.serve import hook_json, serve_payload
from memhooks.recall.served import off

__all__ = ["ANSWERED_AS", "Lookup", "hook_json", "lookup"]  # hook_json: the PreToolUse answer's writer

#: the tool a `ctx7 docs` lookup is answered as
ANSWERED_AS = "mcp__context7__query-docs"


class Lookup:
    """One Bash call of a ctx7 lookup: the hook payload and the command as the CLI reads it."""

    __slots__ = ("payload", "command")

    def __init__(self, payload: dict, command: Ctx7Command) -> None:
        self.payload, self.command = payload, command

    def as_call(self) -> tuple[str, dict] | None:
        """The Context7 call this lookup is answered as (a `docs` lookup), or None."""
        if self.command.verb != "docs":
            return None
        return ANSWERED_AS, {"libraryId": self.command.target, "query": self.command.query}

    def serve(self, db: str) -> dict | None:
        """The PreToolUse answer (deny, the served text as the reason), or None."""
        call = self.as_call()
        if call is None:
            return None
        return serve_payload(self.payload, db, call=call)

    def fallback(self, db: str) -> str | None:
        """The PostToolUse / PostToolUseFailure answer for a failed live lookup, or None."""
        call = self.as_call()
        if call is None or off("MEMHOOKS_FALLBACK"):
            return None
        return fallback_payload(self.payload, db, call=call)


def lookup(raw: bytes) -> Lookup | None:
    """The Bash call of a ctx7 lookup a hook payload is, or None (any other payload)."""
    try:
        payload = loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict) or payload.get("tool_name") != "Bash":
        return None
    tool_input = payload.get("tool_input")
    command = parse(tool_input.get("command")) if isinstance(tool_input, dict) else None
    return Lookup(payload, command) if command is not None else None
