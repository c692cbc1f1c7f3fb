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
are the agent's. Writers hold a POSIX record lock (`os.lockf`: no `fcntl`
import) for their one append; the fold holds it while it reads, commits and truncates,
so a line is never lost or counted twice by a running fold. Either side waits at most
LOCK_WAIT_S for the other. A log past MAX_BYTES (no ingester has run for a very long
time) takes no more lines.
"""

import os
import time

from memhooks.files import escape_field, open_regular, unescape_field

KINDS = ("tier1", "tier2", "doc")  # a lookup's tier, or a document read any other way
ORIGINS = ("agent", "user")
OUTCOMES = ("hit", "miss")
MAX_BYTES = 8 * 1024 * 1024
MAX_LINE = 64 * 1024


def reads_path(db: str) -> str:
    """`reads.log` next to `memhooks.db` (a store with another name, `x.db`, has `x.reads.log`)."""
    # lazy: hot path (lc-cache-*, -I -S): config only when the reads log is used
    from memhooks.config import beside

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
        fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        if fd is None:
            return False
        try:
            if not _lock(fd):
                return False  # a fold that does not let go (a stopped ingester): not this line
            if os.fstat(fd).st_size > MAX_BYTES:
                return False
            os.write(fd, data)
            return True
        finally:
            os.close(fd)  # releases the lock
    except (OSError, ValueError, UnicodeError):
        return False


LOCK_WAIT_S = 0.5


def _lock(fd: int) -> bool:
    """The log's lock, waited for at most LOCK_WAIT_S: a fold holds it only while it reads,
    commits and truncates (milliseconds), and a lookup never hangs on one that stopped."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            os.lockf(fd, os.F_TLOCK, 0)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)


def parse(data: bytes) -> list[dict]:
    """The well-formed lines of a reads log; anything else (a torn or planted line) is skipped."""
    out = []
    for raw in data.split(b"\n"):
        parts = raw.decode("utf-8", "surrogateescape").split("\t", 5)
        if len(parts) == 5:
            parts.insert(4, "agent")  # a line from before the reader was recorded
        if len(parts) != 6 or parts[0] not in KINDS or parts[1] not in OUTCOMES or \
                parts[4] not in ORIGINS or "\t" in parts[5]:
            continue
        try:
            at = float(parts[2])
        except ValueError:
            continue
        if at != at or at in (float("inf"), float("-inf")):
            continue
        project = unescape_field(parts[5])
        digest = parts[3] if parts[3] != "-" and parts[3].isalnum() else ""
        out.append({"kind": parts[0], "outcome": parts[1], "at": at, "content_hash": digest,
                    "origin": parts[4], "project": project})
    return out


class Taken:
    """The reads log taken for a fold: `read()` locks it exclusively and returns its lines,
    `empty()` truncates it (call it after the fold committed: a crash in between counts
    those lines again at the next fold, never loses them), `close()` releases the lock."""

    def __init__(self, db: str):
        self.path = reads_path(db)
        self.fd: int | None = None

    def pending(self) -> bool:
        try:
            return os.lstat(self.path).st_size > 0
        except OSError:
            return False

    def read(self) -> list[dict]:
        self.fd = open_regular(self.path, os.O_RDWR)
        if self.fd is None:
            return []
        if not _lock(self.fd):  # a writer that does not let go: fold at the next ingest
            self.close()
            return []
        chunks = []
        while True:
            chunk = os.read(self.fd, 1024 * 1024)
            if not chunk:
                break
            chunks.append(chunk)
        return parse(b"".join(chunks))

    def empty(self) -> None:
        if self.fd is not None:
            os.ftruncate(self.fd, 0)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None
