"""Was a live docs or page fetch a failure? The PostToolUse hook's first, cheap look at a
captured tool's result (standard library only, no classifier, no store): what the tool
reported (PostToolUseFailure, the MCP result's `isError`, WebFetch's HTTP status, an empty
answer) decides at once, and what can only be an answer (a long text that is no HTML or JSON,
docs with a code block, a resolve answer listing a library) is let go. Anything else is
handed to memhooks.recall.fallback, which asks the classifier and the store."""

from memhooks._jsonlite import loads
from memhooks.recall.served import off
from memhooks.recall.worth_a_look import MAX_PAYLOAD as MAX_PAYLOAD
from memhooks.recall.worth_a_look import declared_row, worth_a_look

CHECK = "check"  # triage's answer when only the classifier can tell


def kind_of(tool_name) -> str | None:
    """What a tool is, by its name only (the server check is serve.classify's); "declared"
    for a declared docs source's tool whose row may be served (memhooks.doc_sources)."""
    if tool_name == "WebFetch":
        return "webfetch"
    if not isinstance(tool_name, str) or not tool_name.startswith("mcp__") or len(tool_name) > 200:
        return None
    tool = tool_name.rsplit("__", 1)[-1]
    if tool == "resolve-library-id":
        return "context7-resolve"
    if tool in ("query-docs", "get-library-docs"):
        return "context7-docs"
    if tool in ("web_fetch_exa", "crawling_exa"):
        return "exa-fetch"
    return "declared" if declared_row(tool_name) else None


# ----------------------------------------------------------------------------- is it an error?

def response_text(value, depth: int = 0) -> str:
    """The text of a tool response in the shapes seen: content blocks, a string (a JSON
    string of blocks too), `{content: [...]}`, `structuredContent`, WebFetch's `result`."""
    if depth > 3:
        return ""
    if isinstance(value, str):
        t = value.strip()
        if t[:1] in ("[", "{") and len(t) <= 256 * 1024:
            try:
                inner = loads(t)
            except (ValueError, RecursionError):
                return value
            if isinstance(inner, list) or (isinstance(inner, dict) and (
                    "content" in inner or "structuredContent" in inner)):
                got = response_text(inner, depth + 1)
                return got if got.strip() else value
        return value
    if isinstance(value, list):
        out = []
        for b in value:
            if isinstance(b, str):
                out.append(b)
            elif isinstance(b, dict) and b.get("type") in ("text", None) and isinstance(b.get("text"), str):
                out.append(b["text"])
        return "\n\n".join(out)
    if isinstance(value, dict):
        for key in ("content", "structuredContent", "result", "text"):
            if key in value:
                return response_text(value[key], depth + 1)
    return ""


def _persisted(text: str) -> bool:
    """Claude Code's "a large output was saved to a file" note (not an error)."""
    low = text[:8000].lower()
    return "<persisted-output>" in low or "output has been saved to" in low or "output saved to" in low


def is_error_result(value, depth: int = 0) -> bool:
    """Whether a tool response is an MCP result marked `isError: true` (as an object, or a
    JSON string of one)."""
    if depth > 2:
        return False
    if isinstance(value, dict):
        return value.get("isError") is True or value.get("is_error") is True
    if isinstance(value, str):
        t = value.strip()
        if t[:1] == "{" and '"isError"' in t[:256 * 1024] and len(t) <= 256 * 1024:
            try:
                return is_error_result(loads(t), depth + 1)
            except (ValueError, RecursionError):
                return False
    return False


def triage(kind: str, tool_response) -> str | None:
    """Why a PostToolUse answer is a failure (an error family), None when it is surely an
    answer, or CHECK when only the classifier can tell (a short or oddly shaped text).

    By what the tool reported, in this order: the MCP result's `isError`; WebFetch's HTTP
    status (429, 5xx); an empty answer; the tool's own error forms matched whole and anchored
    (memhooks.classify.live_failure). A no-results answer, or any text with documentation's
    shape, is an answer whatever words it holds; when unsure, the live answer stays."""
    if is_error_result(tool_response):
        return "tool error"
    text = response_text(tool_response)
    stripped = text.strip()
    if kind == "webfetch" and isinstance(tool_response, dict):
        code = tool_response.get("code")
        if isinstance(code, int) and not isinstance(code, bool) and (code == 429 or 500 <= code <= 599):
            return "rate limited" if code == 429 else "http error"
    if not stripped:
        return "empty answer"
    head = stripped[0]
    # What can only be an answer, told without the classifier: a long text that is no HTML
    # or JSON (no error form is that long), docs with a code block, a resolve answer listing
    # a library, a large output saved to a file.
    if head not in "{[<" and (len(stripped) > 4096 or _persisted(stripped) or "```" in stripped or (
            kind == "context7-resolve" and "context7-compatible library id:" in stripped.lower())):
        return None
    return CHECK




def suspect(raw: bytes) -> dict | None:
    """The payload of a PostToolUse / PostToolUseFailure event for a tool memhooks answers,
    when its result may be a failure; None when there is nothing to do (the cheap path:
    a byte look first (memhooks.recall.worth_a_look), then one JSON parse)."""
    if off("MEMHOOKS_FALLBACK") or not worth_a_look(raw):
        return None
    try:
        payload = loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict) or kind_of(payload.get("tool_name")) is None:
        return None
    event = payload.get("hook_event_name")
    if event == "PostToolUseFailure":
        return None if payload.get("is_interrupt") is True else payload
    if event != "PostToolUse":
        return None
    kind = kind_of(payload.get("tool_name"))
    return payload if kind and triage(kind, payload.get("tool_response")) is not None else None
