"""Adapters: pure functions turning one parsed hook event into typed records.

Entry point: :func:`route`. It never raises; anything unexpected becomes an
``AdapterResult(skip_reason=...)``. No SQL, no file IO, no redaction, no logging.
"""

from __future__ import annotations

from typing import Any

from memhooks import doc_sources
from memhooks.ingest.adapters import context7, ctx7_cli, declared, exa, web
from memhooks.ingest.adapters.text import (
    MIN_DOC_CHARS,
    is_persisted_note,
    is_too_small,
    response_text,
    response_text_blocks,
)
from memhooks.ingest.records import AdapterResult

# Which tools are captured, and how a tool name splits into (server, tool): one rule for the
# capture hook and the adapters (memhooks.tools, standard library only).
from memhooks.tools import CONTEXT7_TOOLS, classify, parse_tool_name

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

# ---------------------------------------------------------------- routing

def route(event: Any) -> AdapterResult:
    """The one entry point: event dict -> AdapterResult. Never raises."""
    try:
        return _route(event)
    except Exception as exc:  # noqa: BLE001 - defensive: a parser bug on hostile input must not break ingestion
        return AdapterResult(skip_reason=f"adapter error: {type(exc).__name__}")


def _route(event: Any) -> AdapterResult:
    if not isinstance(event, dict):
        return AdapterResult(skip_reason="not an event object")
    hook = event.get("hook_event_name")
    server, tool = parse_tool_name(event.get("tool_name"))
    kind = classify(server, tool) if tool else None
    if server is None and tool == "Bash":
        kind = "ctx7-cli"  # a Context7 CLI lookup, or any other command (skipped, never stored)

    def skip(reason: str) -> AdapterResult:
        return AdapterResult(skip_reason=reason, server=server, tool=tool or None)

    if hook == "PostToolUseFailure":
        return skip("tool failure")
    if hook != "PostToolUse":
        return skip(f"not a PostToolUse event: {str(hook)[:40]}")
    if kind is None:
        return skip("not a captured tool")

    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    tool_response = event.get("tool_response")

    if kind == "ctx7-cli":
        result = ctx7_cli.adapt(tool_input, tool_response)
    elif kind == "declared":
        row = doc_sources.find(server, tool)
        if row is None or server is None:
            return skip("not a captured tool")
        result = declared.adapt(row, server, tool, tool_input, tool_response)
    elif kind == "context7":
        result = context7.adapt(tool, tool_input, tool_response)
    elif kind == "exa":
        result = exa.adapt(tool, tool_input, tool_response)
    else:
        result = web.adapt(tool, tool_input, tool_response)

    result.server = server
    result.tool = tool
    result.source_tool = result.source_tool or (
        "context7" if kind in ("context7", "ctx7-cli") else "exa" if kind == "exa" else tool.lower()
    )
    if result.empty and result.skip_reason is None:
        result.skip_reason = "empty content"
    return result
