"""Adapters: pure functions turning one parsed hook event into typed records.

Entry point: :func:`route`. It never raises; anything unexpected becomes an
``AdapterResult(skip_reason=...)``. No SQL, no file IO, no redaction, no logging.
"""

from __future__ import annotations

import re
from typing import Any

from memhooks.ingest.adapters.text import (
    MIN_DOC_CHARS,
    is_persisted_note,
    is_too_small,
    response_text,
    response_text_blocks,
)
from memhooks.ingest.records import AdapterResult

__all__ = [
    "MIN_DOC_CHARS",
    "CONTEXT7_TOOLS",
    "classify",
    "is_persisted_note",
    "is_too_small",
    "parse_tool_name",
    "response_text",
    "response_text_blocks",
    "route",
]

CONTEXT7_TOOLS = frozenset({"resolve-library-id", "query-docs", "get-library-docs"})
BUILTINS = frozenset({"WebFetch", "WebSearch"})

# "exa" as a token of the server name (exa, exa-mcp, my_exa, plugin exa …),
# not as a mere substring ("example-server" is not EXA).
_EXA_SERVER_RE = re.compile(r"(?:^|[^a-z])exa(?:[^a-z]|$)", re.IGNORECASE)

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
