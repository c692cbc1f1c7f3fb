"""Whether the store can be written where it lives: a read-only folder (or file) is not a
damaged one, and the words for it say so."""

from __future__ import annotations

import os


def read_only_reason(db: str) -> str | None:
    """Why SQLite cannot write the store at `db` (its folder or one of its files is
    read-only: a read-only mount, or permissions), or None when nothing says so. SQLite in
    WAL mode writes `-wal` and `-shm` files beside the database even to read it, so a
    read-only folder makes a healthy store unopenable."""
    folder = os.path.dirname(os.path.abspath(db))
    probe = folder
    while probe and not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if probe and os.path.isdir(probe) and not os.access(probe, os.W_OK | os.X_OK):
        return (f"the folder {probe} is read-only: memhooks cannot write its store there "
                "(SQLite writes -wal/-shm files beside the database even to read it); make it "
                "writable, or point MEMHOOKS_DB at a writable place")
    if probe and os.path.exists(probe) and not os.path.isdir(probe):
        return f"{probe} is a file where the store's folder should be"
    for path in (db, db + "-wal", db + "-shm"):
        if os.path.isfile(path) and not os.access(path, os.W_OK):
            return (f"{path} is read-only: memhooks cannot write it (the file itself is not "
                    "damaged); make it writable (chmod u+w)")
    return None
