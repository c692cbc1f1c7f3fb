"""Error log beside the DB (standard library only; used on hot paths).

Hooks never print tracebacks: they write them here. The log rotates at 1 MiB
(one old file kept), is created 0600, and never records the environment. A line is one
event: hostile outside input is logged with its cause only (memhooks.entry._boundary); a
traceback is kept for memhooks' own bugs.
"""

from __future__ import annotations

import sys

from memhooks.config import log_path
from memhooks.files import write_log_line
from memhooks.redact import redact_text


def log_error(message: str) -> None:
    """Append one line beside the DB, or in a fallback folder when that folder is
    unwritable (the same folders as the spool's); never raises."""
    try:
        write_log_line(log_path(), message)
    except Exception:  # noqa: BLE001 - the log must never break a hook (any path, any folder)
        pass


def format_exception(exc: BaseException) -> str:
    """A traceback of `exc` as Python prints one, without the source lines (the traceback
    module would load tokenize and re on every hot path)."""
    lines = ["Traceback (most recent call last):"]
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}')
        tb = tb.tb_next
    text = str(exc)
    lines.append(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
    return "\n".join(lines) + "\n"


def log_exception(context: str) -> None:
    """Log the current exception with its traceback (redacted); never raises."""
    exc = sys.exc_info()[1]
    if exc is None:
        log_error(f"{context}: (no exception)")
        return
    try:
        text = redact_text(format_exception(exc))
    except Exception:  # noqa: BLE001 - an unredactable traceback is not logged at all
        text = f"{type(exc).__name__} (traceback withheld: it could not be redacted)\n"
    log_error(f"{context}: {text}")
