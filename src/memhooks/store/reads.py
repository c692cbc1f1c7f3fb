"""The reads log: the one way a read is counted (standard library only).

Every read of the store — a lookup command's answer, a served call, a search or `show`, an
MCP tool — is a line appended to `reads.log` beside the store (`x.reads.log` for a store
`x.db`); the projection writer folds the lines into the counters, the documents' access
counts and who read them at its next ingest (memhooks.ingest.pipeline; `memhooks stats`
ingests before it reads). A read never pays for a write transaction in the store (a BEGIN
IMMEDIATE, a commit's fsyncs, a WAL checkpoint when it closes), which would cost more than
the lookup itself.

A line: kind (`tier1` | `tier2` | `doc`), outcome (`hit` | `miss`), epoch, the content hash
of the document read (else `-`), who read it (`agent` | `user`), and the project (`%`, tab,
CR and LF percent-escaped), tab-separated; lines of the earlier format, without the reader,
are the agent's. Writers hold a POSIX record lock (`os.lockf`: no `fcntl` import) for their
one append. The fold takes the log by renaming it to `reads.log.folding` under that lock
(a writer then appends to a new `reads.log`; one that had opened the old file sees, once it
holds the lock, that the name is no longer its file and opens the new one), then streams
the renamed file in fixed-size chunks (memory bounded whatever its size), commits what it
counted and deletes it. A fold that stopped half way leaves the renamed file, which the
next fold counts first: a crash can count lines twice, never lose one. A writer waits at
most LOCK_WAIT_S for the lock. A log past MAX_BYTES (no ingester has run for a very long
time) takes no more lines.
"""

import os
import time

from memhooks.config import beside
from memhooks.files import escape_field, open_regular, unescape_field

KINDS = ("tier1", "tier2", "doc")  # a lookup's tier, or a document read any other way
ORIGINS = ("agent", "user")
OUTCOMES = ("hit", "miss")
MAX_BYTES = 8 * 1024 * 1024
MAX_LINE = 64 * 1024


def reads_path(db: str) -> str:
    """`reads.log` next to `memhooks.db` (a store with another name, `x.db`, has `x.reads.log`)."""
    return beside(db, "reads.log")


def note(db: str, kind: str, outcome: str, project: str, content_hash: str = "",
         now: float | None = None, origin: str = "agent") -> bool:
    """Append one read: a lookup's answer (kind tier1/tier2, hit or miss). Never raises;
    False when nothing was written (no store folder, an unwritable one, a log that is full)."""
    return _append(db, [(kind, outcome, content_hash)], project, now, origin)


def note_documents(db: str, content_hashes, project: str | None, now: float | None = None,
                   origin: str = "agent") -> bool:
    """Append one read of each document (a served call, a search hit, `show`, an MCP tool)."""
    return _append(db, [("doc", "hit", h) for h in content_hashes], project or "", now, origin)


def _line(kind: str, outcome: str, at: float, content_hash: str, origin: str, project: str) -> bytes:
    digest = content_hash if content_hash and content_hash.isalnum() and len(content_hash) <= 128 else "-"
    return (f"{kind}\t{outcome}\t{at:.3f}\t{digest}\t{origin}\t{escape_field(project)}\n"
            .encode("utf-8", "surrogateescape"))


def _append(db: str, reads: list, project: str, now: float | None, origin: str) -> bool:
    if not reads or origin not in ORIGINS:
        return False
    if any(kind not in KINDS or outcome not in OUTCOMES for kind, outcome, _ in reads):
        return False
    try:
        at = time.time() if now is None else now
        data = b"".join(_line(k, o, at, h, origin, project or "") for k, o, h in reads)
        if len(data) > MAX_LINE * len(reads):
            return False
        path = reads_path(db)
        if not os.path.isdir(os.path.dirname(path) or "."):
            return False  # a read never creates the store's folder
        for _attempt in (1, 2):
            fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            if fd is None:
                return False
            try:
                if not _lock(fd):
                    return False  # a fold that does not let go (a stopped ingester): not this line
                st = os.fstat(fd)
                if not _still_named(path, st):
                    continue  # a fold took this file meanwhile: append to the new one
                if st.st_size > MAX_BYTES:
                    return False
                os.write(fd, data)
                return True
            finally:
                os.close(fd)  # releases the lock
        return False
    except (OSError, ValueError, UnicodeError):
        return False


def _still_named(path: str, st) -> bool:
    try:
        now = os.lstat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


LOCK_WAIT_S = 0.5


def _lock(fd: int) -> bool:
    """The log's lock, waited for at most LOCK_WAIT_S: a fold holds it only while it renames
    the log (microseconds), and a lookup never hangs on one that stopped."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            os.lockf(fd, os.F_TLOCK, 0)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)


def parse_line(raw: bytes) -> dict | None:
    """One well-formed line of a reads log, else None (a torn or planted line)."""
    parts = raw.decode("utf-8", "surrogateescape").split("\t", 5)
    if len(parts) == 5:
        parts.insert(4, "agent")  # a line from before the reader was recorded
    if len(parts) != 6 or parts[0] not in KINDS or parts[1] not in OUTCOMES or \
            parts[4] not in ORIGINS or "\t" in parts[5]:
        return None
    try:
        at = float(parts[2])
    except ValueError:
        return None
    if at != at or at in (float("inf"), float("-inf")):
        return None
    digest = parts[3] if parts[3] != "-" and parts[3].isalnum() else ""
    return {"kind": parts[0], "outcome": parts[1], "at": at, "content_hash": digest,
            "origin": parts[4], "project": unescape_field(parts[5])}


def parse(data: bytes) -> list[dict]:
    """The well-formed lines of a reads log; anything else (a torn or planted line) is skipped."""
    return [r for r in map(parse_line, data.split(b"\n")) if r is not None]


CHUNK = 1024 * 1024


def folding_path(db: str) -> str:
    return beside(db, "reads.log.folding")


class Taken:
    """The reads log taken for a fold: `take()` renames it to `reads.log.folding` under the
    writers' lock (or finds one a stopped fold left), `records()` streams that file's
    well-formed lines in CHUNK-sized reads, `done()` deletes it (call it once what was
    counted is committed)."""

    def __init__(self, db: str):
        self.path = reads_path(db)
        self.work = folding_path(db)

    def pending(self) -> bool:
        for path in (self.path, self.work):
            try:
                if os.lstat(path).st_size > 0:
                    return True
            except OSError:
                continue
        return False

    def take(self) -> bool:
        """Whether a file is ready to fold."""
        if os.path.lexists(self.work):
            return True  # a fold stopped half way: count it (again) first
        fd = open_regular(self.path, os.O_RDWR)
        if fd is None:
            return False
        try:
            if not _lock(fd):  # a writer that does not let go: fold at the next ingest
                return False
            st = os.fstat(fd)
            if st.st_size == 0 or not _still_named(self.path, st):
                return False
            os.rename(self.path, self.work)
            return True
        finally:
            os.close(fd)  # releases the lock

    def records(self):
        """The folding file's well-formed lines, read CHUNK bytes at a time; a line longer
        than MAX_LINE is skipped, never held whole."""
        fd = open_regular(self.work, os.O_RDONLY)
        if fd is None:
            return
        try:
            carry, skipping = b"", False
            while True:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                lines = chunk.split(b"\n")
                lines[0] = carry + lines[0]
                carry = lines.pop()
                for raw in lines:
                    if skipping:
                        skipping = False  # the end of an overlong line
                        continue
                    rec = parse_line(raw)
                    if rec is not None:
                        yield rec
                if len(carry) > MAX_LINE:
                    carry, skipping = b"", True
            if carry and not skipping:
                rec = parse_line(carry)
                if rec is not None:
                    yield rec
        finally:
            os.close(fd)

    def done(self) -> None:
        try:
            os.unlink(self.work)
        except OSError:
            pass
