"""The PostToolUse hook's first look at a raw payload, in bytes, before any parse (standard
library only, no json): could this be a failed call of a tool memhooks answers?

No when the payload is too large, names none of those tools, or (with no PostToolUseFailure,
no `isError`, no WebFetch status to read) its tool_response holds a code block: docs with a
code block are an answer (memhooks.recall.failure.triage), and when unsure the live answer
stays. Yes sends it on to memhooks.recall.failure (one JSON parse, the triage)."""

MAX_PAYLOAD = 4 * 1024 * 1024
# A tool memhooks can answer has one of these in its raw payload.
NAMES = (b"query-docs", b"get-library-docs", b"resolve-library-id", b"web_fetch_exa",
         b"crawling_exa", b'"WebFetch"')
_REPORTED = (b"PostToolUseFailure", b"isError", b"is_error", b'"WebFetch"')


def worth_a_look(raw: bytes) -> bool:
    if len(raw) > MAX_PAYLOAD or not any(n in raw for n in NAMES):
        return False
    if any(r in raw for r in _REPORTED):
        return True
    at = raw.rfind(b'"tool_response"')
    return at < 0 or b"```" not in raw[at:]
