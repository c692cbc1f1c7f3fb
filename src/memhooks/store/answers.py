"""The answers file: this store's positive tier1 rows outside SQLite, for lookups that only
read (standard library only).

`lc-cache-lookup NAME` is run before every Context7 call. Answering it from SQLite costs
loading `_sqlite3` and libsqlite3, opening the store and parsing its schema: about half of
what the process costs above the interpreter. So the projection writer also writes
`tier1.answers` beside the store (`x.tier1.answers` for a store `x.db`): every tier1 row
with a library ID (project, name key, loose key, ID, expiry, time resolved), grouped by
project, under a header naming the store's state it was read from.

That state is the store's key (`store_key`): the file identity, size, mtime and header of
`memhooks.db` and, when its WAL holds frames, of the `-wal` file and the wal-index header
in `-shm` (whose change counter moves at every commit). Any commit by anyone, memhooks or
not, changes it. The writer (`vouch`) takes the key, reads the rows, takes the key again,
and writes the file (atomically) only when the two agree; the reader (`project_answer`)
uses the file only when its key is the store's key now. So the file is used exactly when
no commit happened since its rows were read, and never otherwise: a store written since
(a capture ingested, a forget, a direct UPDATE) is answered from SQLite until the next
vouch (the ingester vouches after every run, lc-cache-write and the warm after theirs).

The file answers what the first two steps of recall.queries.find_tier1 answer: this
project's fresh row by exact key, then by loose key, the latest resolved first. Anything
else (another project's answer, a known library, a miss) is asked of SQLite.
"""

import os
import time

MAGIC = "memhooks-answers 1"
HEADER_BYTES = 256 * 1024  # the key and a line a project: thousands of projects
MAX_BYTES = 4 * 1024 * 1024  # one project's rows


def answers_path(db: str) -> str:
    """`tier1.answers` next to `memhooks.db` (`x.tier1.answers` for a store `x.db`)."""
    from memhooks.config import DB_NAME

    folder, name = os.path.split(db)
    if name == DB_NAME:
        return os.path.join(folder, "tier1.answers")
    stem = name[:-3] if name.endswith(".db") else name
    return os.path.join(folder, stem + ".tier1.answers")


def _head(path: str, size: int) -> bytes | None:
    """The first `size` bytes of a regular file (None: missing, or not a regular file)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.pread(fd, size, 0)
    except OSError:
        return None
    finally:
        os.close(fd)


def store_key(db: str) -> str | None:
    """The store's state as its files show it; None when it cannot be read. Every commit
    changes it: in WAL mode the frames it appends grow the `-wal` file or, in a WAL begun
    anew, change its salts, and the wal-index header's counter moves; a checkpoint rewrites
    `memhooks.db` (its mtime and change counter); a healed or replaced store is another file."""
    try:
        st = os.stat(db)
    except OSError:
        return None
    head = _head(db, 100)
    if head is None:
        return None
    parts = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, head[24:28].hex(), head[92:100].hex()]
    try:
        wal = os.stat(db + "-wal")
    except OSError:
        wal = None
    if wal is not None and wal.st_size > 0:  # an empty WAL adds nothing to the file's state
        wal_head = _head(db + "-wal", 32) or b""
        shm_head = _head(db + "-shm", 96) or b""  # the wal-index header, both copies
        parts += [wal.st_ino, wal.st_size, wal.st_mtime_ns, wal_head.hex(), shm_head.hex()]
    return " ".join(str(p) for p in parts)


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\t", "%09").replace("\n", "%0A").replace("\r", "%0D")


def _unescape(text: str) -> str:
    # Every `%` of the original became `%25`, so each code is decoded exactly once.
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%09", "\t").replace("%25", "%")


# --------------------------------------------------------------------------- the writer

def vouch(db: str) -> bool:
    """Write the answers file for the store as it is now (after the caller's commits, its
    connections closed). Never raises; False when nothing was written (no store, one
    behind the migrations, a commit meanwhile)."""
    try:
        return _vouch(db)
    except Exception:  # noqa: BLE001 - an answers file is never worth a failed writer
        return False


def _vouch(db: str) -> bool:
    import sqlite3

    from memhooks.recall.queries import tier1_answer_rows
    from memhooks.store.reader import closing, connect_reader, is_current

    before = store_key(db)
    if before is None:
        return False
    try:
        with closing(connect_reader(db)) as conn:
            if not is_current(conn):
                return False
            rows = tier1_answer_rows(conn)
    except sqlite3.Error:
        return False
    if store_key(db) != before:
        return False  # a commit while we read: the next vouch writes it
    data = _render(before, rows)
    if data.find(b"\n\n") + 2 > HEADER_BYTES:
        return False  # more projects than a lookup reads a header for: SQLite answers them
    _write(answers_path(db), data)
    return True


def _render(key: str, rows) -> bytes:
    sections: dict[str, list[str]] = {}
    for project, name_key, loose, library_id, expires_at, resolved_at in rows:
        if not library_id:
            continue
        sections.setdefault(project or "", []).append("\t".join((
            _escape(name_key or ""), _escape(loose or ""), _escape(library_id),
            repr(float(expires_at or 0)), repr(float(resolved_at or 0)))) + "\n")
    body, index, offset = [], [], 0
    for project, lines in sections.items():
        chunk = "".join(lines).encode("utf-8", "surrogateescape")
        if len(chunk) > MAX_BYTES:
            continue  # a lookup would not read that much: SQLite answers this project
        index.append(f"{_escape(project)}\t{offset}\t{offset + len(chunk)}\n")
        body.append(chunk)
        offset += len(chunk)
    header = f"{MAGIC}\nkey {key}\n" + "".join(index) + "\n"
    return header.encode("utf-8", "surrogateescape") + b"".join(body)


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


# --------------------------------------------------------------------------- the reader

def project_answer(db: str, project: str, name: str, now: float | None = None) -> str | None:
    """The library ID find_tier1 answers for `name` in `project` from this project's own
    rows, read from the answers file; None when the file cannot answer (missing, written
    before the store's last commit, no such fresh row): the caller asks SQLite."""
    try:
        return _project_answer(db, project, name, time.time() if now is None else now)
    except Exception:  # noqa: BLE001 - the SQLite path answers instead
        return None


def _project_answer(db: str, project: str, name: str, now: float) -> str | None:
    import stat

    try:
        fd = os.open(answers_path(db), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        # The header (the key and one line a project) comes first: read it, then only this
        # project's rows.
        head = os.pread(fd, HEADER_BYTES, 0)
        if not head.startswith(MAGIC.encode() + b"\nkey "):
            return None
        end = head.find(b"\n\n")
        if end < 0:
            return None
        lines = head[:end].decode("utf-8", "surrogateescape").split("\n")
        if lines[1][4:] != store_key(db):
            return None
        section = None
        for line in lines[2:]:
            parts = line.rsplit("\t", 2)
            if len(parts) == 3 and _unescape(parts[0]) == project:
                start, stop = int(parts[1]), int(parts[2])
                if 0 <= start <= stop and stop - start <= MAX_BYTES:
                    section = os.pread(fd, stop - start, end + 2 + start).decode("utf-8", "surrogateescape")
                break
    finally:
        os.close(fd)
    if not section:
        return None
    from memhooks.names import lookup_keys, loose_key, valid_library_id

    keys, loose = set(lookup_keys(name)), loose_key(name)
    exact = by_loose = None
    for line in section.split("\n"):
        parts = line.split("\t")
        if len(parts) != 5:
            continue
        expires_at, resolved_at = float(parts[3]), float(parts[4])
        if not expires_at > now:
            continue
        if _unescape(parts[0]) in keys:
            if exact is None or resolved_at > exact[0]:
                exact = (resolved_at, parts[2])
        elif loose and _unescape(parts[1]) == loose:
            if by_loose is None or resolved_at > by_loose[0]:
                by_loose = (resolved_at, parts[2])
    best = exact or by_loose
    if best is None:
        return None
    library_id = _unescape(best[1])
    return library_id if valid_library_id(library_id) else None
