"""Adapters: pure functions turning one parsed hook event into typed records.

Entry point: :func:`route`. It never raises; anything unexpected becomes an
``AdapterResult(skip_reason=...)``. No SQL, no file IO, no redaction, no logging.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memhooks.ingest.records import AdapterResult

__all__ = [
    "MIN_DOC_CHARS",
    "CONTEXT7_TOOLS",
    "classify",
    "is_too_small",
    "parse_tool_name",
    "response_text_blocks",
    "route",
]

# Shared "too small to be a document" rule: stripped content shorter than this.
MIN_DOC_CHARS = 20

CONTEXT7_TOOLS = frozenset({"resolve-library-id", "query-docs", "get-library-docs"})
BUILTINS = frozenset({"WebFetch", "WebSearch"})

# "exa" as a token of the server name (exa, exa-mcp, my_exa, plugin exa …),
# not as a mere substring ("example-server" is not EXA).
_EXA_SERVER_RE = re.compile(r"(?:^|[^a-z])exa(?:[^a-z]|$)", re.IGNORECASE)

# Claude Code replaces a too-large tool output by a note pointing at a file.
_PERSISTED_RE = re.compile(
    r"<persisted-output>|full output (?:has been )?saved to\s*+:?\s*+\S", re.IGNORECASE
)


def is_too_small(text: Any) -> bool:
    """True when *text* is not a string or is too short to be a document."""
    return not isinstance(text, str) or len(text.strip()) < MIN_DOC_CHARS


def parse_tool_name(tool_name: Any) -> tuple[str | None, str]:
    """Split a Claude Code tool name into ``(server, tool)``.

    ``mcp__<server>__<tool>`` -> (server, tool) (split at the first ``__`` after
    the server, as Claude Code does); ``mcp__plugin_<plugin>_<server>__<tool>``
    -> (server, tool); built-ins -> (None, name).
    """
    if not isinstance(tool_name, str):
        return (None, "")
    name = tool_name.strip()
    if not name.startswith("mcp__"):
        return (None, name)
    rest = name[len("mcp__"):]
    idx = rest.find("__")
    if idx <= 0:
        # "mcp__something" without a tool part: treat the whole as the tool
        return (None, name) if idx < 0 else (None, rest[2:])
    server, tool = rest[:idx], rest[idx + 2:]
    if server.startswith("plugin_") and len(server) > len("plugin_"):
        server = _plugin_server(server[len("plugin_"):])
    return (server, tool)


def _plugin_server(pair: str) -> str:
    """``<plugin>_<server>`` -> server. Both halves may contain ``_``.

    The common case is plugin == server (``context7_context7``, ``exa_exa``).
    Otherwise assume the plugin name has no ``_`` (plugin names are kebab-case
    by convention) and take everything after the first ``_``. Routing does not
    depend on the split: ``classify`` looks for context7/exa in the server part.
    """
    n = len(pair)
    if n % 2 == 1:
        half = n // 2
        if pair[half] == "_" and pair[:half] == pair[half + 1:]:
            return pair[half + 1:]
    head, sep, tail = pair.partition("_")
    return tail if sep and tail else pair


def classify(server: str | None, tool: str) -> str | None:
    """Which adapter handles (server, tool): "context7" | "exa" | "web" | None.
    The capture hook decides with the same predicate (memhooks.tools)."""
    from memhooks.tools import classify as _classify

    return _classify(server, tool)


# ---------------------------------------------------------------- responses

def response_text_blocks(tool_response: Any) -> list[str]:
    """Text blocks of an MCP ``tool_response`` in any of the shapes seen.

    A list of content blocks (text kept, images and other types skipped), a
    plain string, a JSON string (of a block list, of ``{"content": [...]}``,
    of ``{"structuredContent": ...}``, of an arbitrary value: then the string
    is kept as is), an object with a ``content`` list, anything else -> [].
    Never raises.
    """
    try:
        return _blocks(tool_response, depth=0)
    except Exception:  # pragma: no cover - defensive: never raise
        return []


def _blocks(value: Any, depth: int) -> list[str]:
    if depth > 4:
        return []
    if isinstance(value, str):
        return _blocks_from_string(value, depth)
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                btype = item.get("type")
                text = item.get("text")
                if (btype == "text" or btype is None) and isinstance(text, str):
                    out.append(text)
                elif btype == "resource" and isinstance(item.get("resource"), dict):
                    rtext = item["resource"].get("text")
                    if isinstance(rtext, str):
                        out.append(rtext)
        return out
    if isinstance(value, dict):
        if isinstance(value.get("content"), list):
            return _blocks(value["content"], depth + 1)
        if isinstance(value.get("content"), str):
            return [value["content"]]
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            return [value["text"]]
        sc = value.get("structuredContent")
        if isinstance(sc, str):
            return [sc]
        if isinstance(sc, dict):
            for key in ("text", "result", "content"):
                if isinstance(sc.get(key), str):
                    return [sc[key]]
            try:
                return [json.dumps(sc, ensure_ascii=False)]
            except (TypeError, ValueError):
                return []
        return []
    return []


def _blocks_from_string(text: str, depth: int) -> list[str]:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return [text]
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        return [text]
    if isinstance(parsed, list):
        if parsed and all(_is_block(b) for b in parsed):
            return _blocks(parsed, depth + 1)
        return [text]
    if isinstance(parsed, dict):
        if isinstance(parsed.get("content"), list) and all(
            _is_block(b) for b in parsed["content"]
        ):
            return _blocks(parsed["content"], depth + 1)
        if _is_block(parsed):
            return [parsed["text"]]
        if "structuredContent" in parsed and len(parsed) <= 3:
            got = _blocks({"structuredContent": parsed["structuredContent"]}, depth + 1)
            if got:
                return got
    return [text]


def _is_block(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and (value.get("type") != "text" or isinstance(value.get("text"), str))
    )


def response_text(tool_response: Any) -> str:
    """All text blocks joined by a blank line."""
    return "\n\n".join(b for b in response_text_blocks(tool_response) if b)


def is_persisted_note(text: str) -> bool:
    """Claude Code's "large output was saved to a file" replacement note."""
    return len(text) < 8000 and bool(_PERSISTED_RE.search(text))


# ---------------------------------------------------------------- routing

def route(event: Any) -> AdapterResult:
    """The one entry point: event dict -> AdapterResult. Never raises."""
    try:
        return _route(event)
    except Exception as exc:  # defensive: a parser bug must not break ingestion
        return AdapterResult(skip_reason=f"adapter error: {type(exc).__name__}")


def _route(event: Any) -> AdapterResult:
    if not isinstance(event, dict):
        return AdapterResult(skip_reason="not an event object")
    hook = event.get("hook_event_name")
    server, tool = parse_tool_name(event.get("tool_name"))
    kind = classify(server, tool) if tool else None
    base = {"server": server, "tool": tool or None}
    if hook == "PostToolUseFailure":
        return AdapterResult(skip_reason="tool failure", **base)
    if hook != "PostToolUse":
        return AdapterResult(skip_reason=f"not a PostToolUse event: {str(hook)[:40]}", **base)
    if kind is None:
        return AdapterResult(skip_reason="not a captured tool", **base)

    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    tool_response = event.get("tool_response")

    if kind == "context7":
        from memhooks.ingest.adapters import context7

        result = context7.adapt(tool, tool_input, tool_response)
    elif kind == "exa":
        from memhooks.ingest.adapters import exa

        result = exa.adapt(tool, tool_input, tool_response)
    else:
        from memhooks.ingest.adapters import web

        result = web.adapt(tool, tool_input, tool_response)

    result.server = server
    result.tool = tool
    result.source_tool = result.source_tool or (
        "context7" if kind == "context7" else "exa" if kind == "exa" else tool.lower()
    )
    if result.empty and result.skip_reason is None:
        result.skip_reason = "empty content"
    return result
