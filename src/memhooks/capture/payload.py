"""A hook's raw payload made ready for the journal (standard library only): read with a
cap, redacted, cut to a stub when over the cap. memhooks.store.journal writes it; a tool
call memhooks does not capture is reduced to metadata first (memhooks.capture.tool_calls)."""

from memhooks.config import MAX_EVENT_BYTES, STUB_HEAD_BYTES
from memhooks.files import read_capped as _read_capped
from memhooks.redact import redact_bytes


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
