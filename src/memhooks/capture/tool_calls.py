"""Which tool a PostToolUse payload is for, and the metadata journaled instead of the content
of a call memhooks does not capture (standard library only: the capture hook's path; the
SessionStart hook never loads this, nor the table of captured tools behind it)."""

from memhooks._jsonlite import loads
from memhooks.gate import top_level_string
from memhooks.store.journal import TOOL_HOOKS
from memhooks.tools import is_captured

_SCAN_NAME_BYTES = 512


def tool_name_of(raw: bytes) -> str | None:
    """The payload's top-level tool_name (a bounded byte scan, a JSON parse when unsure)."""
    name = top_level_string(raw, b"tool_name", _SCAN_NAME_BYTES)
    if name is not None:
        return name
    try:
        event = loads(raw)  # only when the byte scan is unsure
    except (ValueError, RecursionError):
        return None
    value = event.get("tool_name") if isinstance(event, dict) else None
    return value if isinstance(value, str) else None


def metadata_only(raw: bytes, total: int, hook_event_name: str | None, name=...) -> str | None:
    """For a tool call memhooks does not capture: the metadata to journal instead of its
    content (tool name, size, hash). None when the call is captured (or is no tool call).
    `name`: the payload's tool_name when the caller already has it (tool_name_of)."""
    if hook_event_name not in TOOL_HOOKS:
        return None

    name = tool_name_of(raw) if name is ... else name
    if name is None or is_captured(name):
        return None  # captured, or not attributable (invalid JSON...): the ingester fails it
    import hashlib  # hot path: hashlib and json only for a call memhooks does not capture
    import json

    return json.dumps({
        "hook_event_name": hook_event_name, "tool_name": name[:200],  # json.dumps escapes what SQLite could not bind
        "memhooks_metadata_only": True, "bytes": total,
        "sha256": hashlib.sha256(raw).hexdigest(),
    })
