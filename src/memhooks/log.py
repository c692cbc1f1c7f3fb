"""Error log beside the DB (standard library only; used on hot paths).

Hooks never print tracebacks: they write them here. The log rotates at 1 MiB
(one old file kept), is created 0600, and never records the environment.
"""

from __future__ import annotations

from memhooks.files import write_log_line


def log_error(message: str) -> None:
    """Append one line beside the DB, or in a fallback folder when that folder is
    unwritable (the same folders as the spool's); never raises."""
    try:
        # lazy: config loads only when something is logged (the hot paths import log)
        from memhooks.config import log_path

        write_log_line(log_path(), message)
    except Exception:  # noqa: BLE001 - the log must never break a hook
        pass


def log_exception(context: str) -> None:
    """Log the current exception with its traceback (redacted); never raises."""
    try:
        # lazy: traceback and the redaction rules load only when an error is logged
        import traceback

        text = traceback.format_exc()
        try:
            from memhooks.redact import redact_text

            text = redact_text(text)
        except Exception:  # noqa: BLE001
            pass
        log_error(f"{context}: {text}")
    except Exception:  # noqa: BLE001
        pass
