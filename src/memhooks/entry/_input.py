"""A hook's stdin, read with a cap, and the one-line causes for outside input a hook will not
take whole (standard library only)."""

import sys

from memhooks.files import read_capped
from memhooks.gate import top_level_string

# A JSON value nested deeper than this cannot be parsed by the standard library's decoder
# (its recursion limit); counting brackets is a cheap upper bound on the depth, so only a
# payload with this many brackets is parsed to be sure.
DEEP_BRACKETS = 900


def read_stdin(cap: int) -> tuple[bytes, int]:
    """Up to `cap` bytes of stdin, the rest drained and counted: (data, total)."""
    return read_capped(sys.stdin.buffer, cap)


def bash_call(raw: bytes) -> bool:
    """Whether a tool hook's payload is a Bash call, by its top-level tool_name (a bounded
    byte scan, no parse; when the scan cannot tell, by the bytes `"Bash"`)."""
    name = top_level_string(raw, b"tool_name", 64)
    return name == "Bash" if name is not None else b'"Bash"' in raw


def not_utf8(raw: bytes) -> str | None:
    """Why `raw` is not UTF-8 text (one line), or None when it is."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"payload is not valid UTF-8 (byte {exc.start}: {exc.reason})"
    return None


def too_deep(raw: bytes) -> str | None:
    """Why `raw` cannot be parsed as JSON for its nesting (one line), or None."""
    if raw.count(b"[") + raw.count(b"{") < DEEP_BRACKETS:
        return None
    import json  # only for a bracket-heavy payload (json brings re and enum)

    try:
        json.loads(raw)
    except RecursionError:
        return "payload is nested deeper than the JSON parser can follow (RecursionError)"
    except ValueError:
        return None  # not JSON at all: journaled as it is, failed by the ingester
    return None


def hostile(raw: bytes, total: int, cap: int) -> str | None:
    """The first reason a payload is hostile (over the cap, not UTF-8, too deep), or None."""
    if total > cap:
        return f"payload of {total} bytes is over the {cap} byte cap"
    return not_utf8(raw) or too_deep(raw)
