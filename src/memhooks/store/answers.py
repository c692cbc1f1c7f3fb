"""The answers file: what the lookups and the SessionStart fast path read, outside SQLite
(standard library only).

`lc-cache-lookup NAME` is run before every Context7 call. Answering it from SQLite costs
loading `_sqlite3` and libsqlite3, opening the store and parsing its schema: about half of
what the process costs above the interpreter. So the projection writer also writes
`tier1.answers` beside the store (`x.tier1.answers` for a store `x.db`): every tier1 row
and every project's last warm (its fingerprint and ranked names), grouped by project, with
the document count and the Context7 API's backoff, under a header naming the store's state
it was read from.

That state is the store's key (`store_key`): the file identity, size, mtime and header of
`memhooks.db` and, when its WAL holds frames, of the `-wal` file and the wal-index header
in `-shm` (whose change counter moves at every commit). Any commit by anyone, memhooks or
not, changes it. The writer (`vouch`) takes the key, reads the rows, takes the key again,
and writes the file (atomically) only when the two agree; the reader (`project_answer`)
uses the file only when its key is the store's key now. So the file is used exactly when
no commit happened since its rows were read, and never otherwise: a store written since
(a capture ingested, a forget, a direct UPDATE) is answered from SQLite until the next
vouch (the ingester vouches after every run, lc-cache-write and the warm after theirs).

A lookup reads from it what the first two steps of recall.queries.find_tier1 answer:
this project's fresh row by exact key, then by loose key, the latest resolved first;
anything else (another project's answer, a known library, a miss) is asked of SQLite.
SessionStart reads from it what warm.fastpath.fast_answer reads from the store
(`Snapshot` has the same four reads as `fastpath.StoreView`).
"""

import os
import time

from memhooks.files import escape_field, open_regular, unescape_field

MAGIC = "memhooks-answers 2"
HEADER_BYTES = 256 * 1024  # the key and a line a project: thousands of projects
MAX_BYTES = 4 * 1024 * 1024  # one project's rows


def answers_path(db: str) -> str:
    """`tier1.answers` next to `memhooks.db` (`x.tier1.answers` for a store `x.db`)."""
    from memhooks.config import beside

    return beside(db, "tier1.answers")


def _head(path: str, size: int) -> bytes | None:
    """The first `size` bytes of a regular file (None: missing, or not a regular file)."""
    fd = open_regular(path, os.O_RDONLY)
    if fd is None:
        return None
    try:
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

    from memhooks.recall.queries import document_count, tier1_answer_rows, warm_state_rows
    from memhooks.store.reader import closing, connect_reader, is_current
    from memhooks.warm.context import api_retry_row

    before = store_key(db)
    if before is None:
        return False
    try:
        with closing(connect_reader(db)) as conn:
            if not is_current(conn):
                return False
            tier1, warms = tier1_answer_rows(conn), warm_state_rows(conn)
            api, documents = api_retry_row(conn), document_count(conn)
    except sqlite3.Error:
        return False
    if store_key(db) != before:
        return False  # a commit while we read: the next vouch writes it
    data = _render(before, tier1, warms, api, documents)
    if data.find(b"\n\n") + 2 > HEADER_BYTES:
        return False  # more projects than a lookup reads a header for: SQLite answers them
    _write(answers_path(db), data)
    return True


def _num(value) -> str:
    return repr(float(value or 0))


def _render(key: str, tier1, warms, api, documents: int) -> bytes:
    sections: dict[str, list[str]] = {}
    for project, name_key, loose, library_id, versioned_id, matched, expires_at, resolved_at in tier1:
        sections.setdefault(project or "", []).append("\t".join((
            "t", escape_field(name_key or ""), escape_field(loose or ""), escape_field(library_id or ""),
            escape_field(versioned_id or ""), escape_field(matched or ""), _num(expires_at),
            _num(resolved_at))) + "\n")
    for project, fingerprint, files, dirs, ranked in warms:
        sections.setdefault(project or "", []).append("\t".join((
            "w", escape_field(fingerprint or ""), escape_field(files or "[]"), escape_field(dirs or "[]"),
            escape_field(ranked or "[]"))) + "\n")
    head = [MAGIC, f"key {key}", f"documents {int(documents)}"]
    if api is not None:
        head.append(f"api {escape_field(str(api['value'] or ''))}\t{_num(api['until'])}")
    body, offset = [], 0
    for project, lines in sections.items():
        chunk = "".join(lines).encode("utf-8", "surrogateescape")
        if len(chunk) > MAX_BYTES:  # a reader would not read that much: SQLite answers it
            head.append(f"s {escape_field(project)}")
            continue
        head.append(f"p {escape_field(project)}\t{offset}\t{offset + len(chunk)}")
        body.append(chunk)
        offset += len(chunk)
    return ("\n".join(head) + "\n\n").encode("utf-8", "surrogateescape") + b"".join(body)


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


# --------------------------------------------------------------------------- the reader

class Snapshot:
    """One project's part of a current answers file, with the reads fast_answer makes
    (the same four as warm.fastpath.StoreView makes of the store)."""

    def __init__(self, documents: int, api: dict | None, tier1: dict, warm: dict | None):
        self._documents, self._api, self._tier1, self._warm = documents, api, tier1, warm

    def warm_state(self, project: str) -> dict | None:
        return self._warm

    def tier1(self, project: str, name_key: str) -> dict | None:
        return self._tier1.get(name_key)

    def api_row(self) -> dict | None:
        return self._api

    def documents(self) -> int:
        return self._documents

    def rows(self):
        return self._tier1.values()


def snapshot(db: str, project: str) -> Snapshot | None:
    """This project's part of the answers file while the file is current, else None (the
    caller reads the store). Never raises."""
    try:
        return _snapshot(db, project)
    except Exception:  # noqa: BLE001 - the SQLite path answers instead
        return None


def _snapshot(db: str, project: str) -> Snapshot | None:
    fd = open_regular(answers_path(db), os.O_RDONLY)
    if fd is None:
        return None
    try:
        # The header (the key, the counts, a line a project) comes first: read it, then only
        # this project's lines.
        head = os.pread(fd, HEADER_BYTES, 0)
        if not head.startswith(MAGIC.encode() + b"\nkey "):
            return None
        end = head.find(b"\n\n")
        if end < 0:
            return None
        lines = head[:end].decode("utf-8", "surrogateescape").split("\n")
        if lines[1][4:] != store_key(db):
            return None
        documents, api, section = 0, None, ""
        for line in lines[2:]:
            kind, _, rest = line.partition(" ")
            if kind == "documents":
                documents = int(rest)
            elif kind == "api":
                value, until = rest.rsplit("\t", 1)
                api = {"value": unescape_field(value), "until": float(until)}
            elif kind == "s" and unescape_field(rest) == project:
                return None  # too much for this file: the store answers this project
            elif kind == "p":
                name, start, stop = rest.rsplit("\t", 2)
                if unescape_field(name) == project:
                    start, stop = int(start), int(stop)
                    if not (0 <= start <= stop and stop - start <= MAX_BYTES):
                        return None
                    section = os.pread(fd, stop - start, end + 2 + start).decode("utf-8", "surrogateescape")
                    if len(section.encode("utf-8", "surrogateescape")) != stop - start:
                        return None  # cut short: not the file its header describes
    finally:
        os.close(fd)
    tier1, warm = {}, None
    for line in section.split("\n"):
        parts = line.split("\t")
        if parts[0] == "t" and len(parts) == 8:
            tier1[unescape_field(parts[1])] = {
                "name_key": unescape_field(parts[1]), "loose_key": unescape_field(parts[2]),
                "library_id": unescape_field(parts[3]) or None, "versioned_id": unescape_field(parts[4]) or None,
                "matched": unescape_field(parts[5]) or None, "expires_at": float(parts[6]),
                "resolved_at": float(parts[7])}
        elif parts[0] == "w" and len(parts) == 5:
            warm = {"fingerprint": unescape_field(parts[1]), "files": unescape_field(parts[2]),
                    "dirs": unescape_field(parts[3]), "ranked": unescape_field(parts[4])}
    return Snapshot(documents, api, tier1, warm)


def project_answer(db: str, project: str, name: str, now: float | None = None) -> str | None:
    """The library ID find_tier1 answers for `name` in `project` from this project's own
    rows, read from the answers file; None when the file cannot answer (missing, written
    before the store's last commit, no such fresh row): the caller asks SQLite."""
    view = snapshot(db, project)
    if view is None:
        return None
    try:
        from memhooks.names import lookup_keys, loose_key, valid_library_id

        now = time.time() if now is None else now
        keys, loose = set(lookup_keys(name)), loose_key(name)
        exact = by_loose = None
        for row in view.rows():
            if not row["library_id"] or not row["expires_at"] > now:
                continue
            if row["name_key"] in keys:
                if exact is None or row["resolved_at"] > exact["resolved_at"]:
                    exact = row
            elif loose and row["loose_key"] == loose:
                if by_loose is None or row["resolved_at"] > by_loose["resolved_at"]:
                    by_loose = row
        best = exact or by_loose
        if best is not None and valid_library_id(best["library_id"]):
            return best["library_id"]
    except Exception:  # noqa: BLE001 - the SQLite path answers instead
        pass
    return None
