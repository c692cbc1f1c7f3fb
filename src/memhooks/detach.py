"""Starting the detached ingester (standard library only; a leaf, so the capture hook and the
lookups can both kick it without one importing the other)."""

import fcntl
import os
import sys

from memhooks.config import ENTRY
from memhooks.log import log_exception


def spawn_ingest(db: str) -> bool:
    """Start a detached ingester unless one is already running. Never raises.

    The ingester's lock is taken here and handed to the child (an inherited descriptor of
    the same open lock file, `--lock-fd`): from this moment until the child exits, every
    other hook sees an ingester running. Taken by the child itself, the lock would be free
    for the 0.1-0.5 s the child needs to start, and a burst of hooks (parallel subagents)
    would start an ingester each."""
    if os.environ.get("MEMHOOKS_NO_SPAWN", "") == "1":
        return False
    try:
        lock = db + ".ingest.lock"
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # a running ingester re-checks for pending events before it exits
            python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
            env = dict(os.environ)
            env["MEMHOOKS_DB"] = db
            null = os.devnull
            os.set_inheritable(fd, True)
            os.posix_spawn(
                python,
                [python, ENTRY, "ingest", "--background", f"--lock-fd={fd}"],
                env,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
                ],
                setsid=True,
            )
            return True
        finally:
            os.close(fd)  # the child's copy holds the lock now (none if no child started)
    except OSError:  # no ingester now is fine (the next hook starts one); logged
        log_exception("spawn ingest")
        return False
