"""Error log beside the DB (standard library only; used on hot paths).

Hooks never print tracebacks: they write them here. The log rotates at 1 MiB
(one old file kept), is created 0600, and never records the environment.
"""

from __future__ import annotations

import os
import time

MAX_LOG_BYTES = 1024 * 1024


def _path() -> str:
    from memhooks.config import log_path

    return log_path()


def _write(path: str, data: bytes) -> None:
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        from memhooks.config import make_private_dirs

        make_private_dirs(folder)
    try:
        if os.path.getsize(path) > MAX_LOG_BYTES:
            os.replace(path, path + ".1")
    except OSError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def log_error(message: str) -> None:
    """Append one line beside the DB, or in a fallback folder when that folder is
    unwritable (the same folders as the spool's); never raises."""
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        line = f"{stamp} pid={os.getpid()} {message}".replace("\x00", "")
        if not line.endswith("\n"):
            line += "\n"
        data = line.encode("utf-8", "replace")
        path = _path()
        try:
            _write(path, data)
            return
        except OSError:
            pass
        from memhooks.config import LOG_NAME, fallback_dirs

        for folder in fallback_dirs():
            try:
                _write(os.path.join(folder, LOG_NAME), data)
                return
            except OSError:
                continue
    except Exception:  # noqa: BLE001 - the log must never break a hook
        pass


def log_exception(context: str) -> None:
    """Log the current exception with its traceback (redacted); never raises."""
    try:
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
