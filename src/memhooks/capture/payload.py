"""A hook's raw payload made ready for the journal (standard library only): read with a
cap, redacted, cut to a stub when over the cap, or reduced to metadata for a tool memhooks
does not capture. memhooks.store.journal writes it."""

from memhooks._jsonlite import loads
from memhooks.config import MAX_EVENT_BYTES, STUB_HEAD_BYTES
from memhooks.files import read_capped as _read_capped
from memhooks.gate import top_level_string
from memhooks.redact import redact_bytes
from memhooks.store.journal import TOOL_HOOKS
from memhooks.tools import is_captured

_SCAN_NAME_BYTES = 512


def read_capped(stream, cap: int = MAX_EVENT_BYTES) -> tuple[bytes, int]:
    """Read up to `cap` bytes; drain and count the rest. Returns (data, total)."""
    return _read_capped(stream, cap)


def _as_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def prepare(raw: bytes, total: int) -> tuple[str, str | None]:
    """(payload text, error) for a raw payload: redacted, or a stub when too big."""
    if total > MAX_EVENT_BYTES:
        import json  # hot path: json (with re and enum) only for a stub

        head = _as_text(redact_bytes(raw[:STUB_HEAD_BYTES]))
        stub = json.dumps({"memhooks_stub": True, "bytes": total, "head": head})
        return stub, f"payload of {total} bytes is over the {MAX_EVENT_BYTES} byte cap"
    return _as_text(redact_bytes(raw)), None


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
