"""Starting the detached ingester (standard library only; a leaf, so the capture hook and the
lookups can both kick it without one importing the other)."""

import os
import sys


def spawn_ingest(db: str) -> bool:
    """Start a detached ingester unless one is already running. Never raises."""
    if os.environ.get("MEMHOOKS_NO_SPAWN", "") == "1":
        return False
    # lazy: hot path; fcntl and config only when an ingester may start, the log on failure
    try:
        import fcntl

        lock = db + ".ingest.lock"
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a running ingester re-checks for pending events before it exits
        finally:
            os.close(fd)
        from memhooks.config import ENTRY

        python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
        env = dict(os.environ)
        env["MEMHOOKS_DB"] = db
        null = os.devnull
        os.posix_spawn(
            python,
            [python, ENTRY, "ingest", "--background"],
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
            ],
            setsid=True,
        )
        return True
    except Exception:  # noqa: BLE001 - no ingester now is fine (the next hook starts one); logged
        from memhooks.log import log_exception

        log_exception("spawn ingest")
        return False
