"""The PostToolUse hook's first look at a raw payload, in bytes, before any parse (standard
library only, no json): could this be a failed call of a tool memhooks answers?

No when the payload is too large, is no call of a tool memhooks answers (Context7, Exa's
page reads, WebFetch by a byte check; a declared docs source whose row may be served by
its top-level tool_name, memhooks.doc_sources), or (with no PostToolUseFailure, no
`isError`, no WebFetch status to read) its tool_response holds a code block: docs with a
code block are an answer (memhooks.recall.failure.triage), and when unsure the live answer
stays. Yes sends it on to memhooks.recall.failure (one JSON parse, the triage)."""

from memhooks import doc_sources
from memhooks.gate import top_level_string
from memhooks.tools import parse_tool_name

MAX_PAYLOAD = 4 * 1024 * 1024
# A built-in tool memhooks can answer has one of these in its raw payload.
NAMES = (b"query-docs", b"get-library-docs", b"resolve-library-id", b"web_fetch_exa",
         b"crawling_exa", b'"WebFetch"')
_REPORTED = (b"PostToolUseFailure", b"isError", b"is_error", b'"WebFetch"')


def declared_row(tool_name) -> bool:
    """Whether `tool_name` is a declared docs source's tool whose row may be served."""
    if not isinstance(tool_name, str) or not tool_name.startswith("mcp__") or len(tool_name) > 200:
        return False
    server, tool = parse_tool_name(tool_name)
    row = doc_sources.find(server, tool) if server else None
    return row is not None and row.serve


def worth_a_look(raw: bytes) -> bool:
    if len(raw) > MAX_PAYLOAD:
        return False
    if not any(n in raw for n in NAMES) and not declared_row(top_level_string(raw, b"tool_name", 512)):
        return False
    if any(r in raw for r in _REPORTED):
        return True
    at = raw.rfind(b'"tool_response"')
    return at < 0 or b"```" not in raw[at:]
