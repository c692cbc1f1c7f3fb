"""The journaled cache write of `lc-cache-write` (and `memhooks cache write`): the record read
from the arguments, journaled and applied through admission in one transaction, or, while
the store is new or behind (a plugin's first session, its venv still being built: no
python here can create the projections), judged by admission at once and journaled in its
admitted form, pending for the ingester. A lookup answers from such a pending write
(memhooks.recall.pending), so a write followed at once by a lookup hits in every install
mode. Standard library only. (Apart from the lookups in memhooks.recall.lc_cache, which must
not load json or the redaction.)"""

import json
import os
import stat
import subprocess
import sys
import time

from memhooks.config import ENTRY, max_write_bytes, tier1_ttl_s
from memhooks.redact import redact_text
from memhooks.store.admission import REDACT_MARGIN, Refused, admit_document, admit_tier1, admit_tier2
from memhooks.store.connect import closing, connect_journal, transaction
from memhooks.store.journal import CACHE_WRITE_EVENT, append, mark_done, mark_skipped
from memhooks.store.projections import apply_cache_write


def _write_payload(record: dict, project: str) -> str:
    """The journaled form of a cache write (redacted, like every event)."""
    payload = json.dumps({"hook_event_name": CACHE_WRITE_EVENT, "cwd": project, **record},
                         ensure_ascii=False)
    return redact_text(payload)


def write(conn, record: dict, project: str) -> int:
    """Journal a cache write, then apply it, in one transaction. Returns the event id."""
    now = time.time()
    payload = _write_payload(record, project)
    with transaction(conn):
        event_id = append(conn, payload, size=len(payload), project=project,
                          hook_event_name=CACHE_WRITE_EVENT, received_at=now)
        try:
            apply_cache_write(conn, json.loads(payload), event_id=event_id, project=project,
                              now=now)
        except Refused as exc:
            # admission refused it (nothing was written): journaled as skipped, with why
            mark_skipped(conn, event_id, f"refused: {exc.reason}"[:500], now)
        else:
            mark_done(conn, event_id, now)
    return event_id


def admitted(record: dict, project: str) -> dict:
    """The record as admission lets it be stored, without a store: the checks
    apply_cache_write makes (the same admit_* functions), the body in the form the document
    would hold. Raises Refused. A body admission cuts keeps what came in (cut twice, the
    note would be doubled); a lookup never answers from a pending body over the cap."""
    if record.get("tier") == "tier1":
        admit_tier1(project=project, name=record.get("name"), library_id=record.get("library_id"),
                    origin="write", matched="write", ttl_s=tier1_ttl_s(), provenance="manual")
        return record
    if record.get("tier") != "tier2":
        raise Refused(f"unknown cache tier {str(record.get('tier'))[:20]!r}")
    checked = admit_tier2(library_id=record.get("library_id"), topic=record.get("topic"),
                          document_id=0, origin="write", ttl_s=0, provenance="manual")
    body = record.get("body")
    lid, topic = checked["library_id"], checked["topic"]
    doc = admit_document(project=project, source=lid, source_tool="context7", content=body,
                         title=f"{lid} — {topic}", type="library-docs", library_id=lid,
                         topic=topic, max_bytes=max_write_bytes(), provenance="manual")
    return record if doc["truncated"] else {**record, "body": doc["content"]}


def journal_write(db: str, record: dict, project: str) -> int:
    """Journal a cache write the projections cannot take now (they are new or behind: the
    ingester migrates them and applies it). Admission judges it first: admitted, it is
    journaled pending, in its admitted form; refused, journaled as skipped, with why (as
    `write` does). Returns the event id."""
    now = time.time()
    try:
        record, refusal = admitted(record, project), None
    except Refused as exc:
        refusal = f"refused: {exc.reason}"[:500]
    payload = _write_payload(record, project)
    with closing(connect_journal(db)) as conn:
        return append(conn, payload, size=len(payload), project=project, error=refusal,
                      state="skipped" if refusal else None, hook_event_name=CACHE_WRITE_EVENT,
                      received_at=now)


def ingest_now(timeout: float = 20.0) -> None:
    """Run an ingester in a child process (it needs packages this hot path must not import)."""
    python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
    subprocess.run([python, ENTRY, "ingest"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout,
                   check=False)


def read_regular_file(path: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of a regular file; None for anything else. Opened non-blocking
    (a FIFO never blocks the open) and checked with fstat before a byte is read (a FIFO, a
    device such as /dev/zero, a socket or a folder is refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(1024 * 1024, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def parse_write_args(args: list[str]) -> dict | None:
    """The record for `lc-cache-write` arguments, or None when they are unusable."""
    if not args:
        return None
    tier = args[0]
    if tier == "tier1" and len(args) >= 3 and args[1].strip() and args[2].strip():
        return {"tier": "tier1", "name": args[1].strip(), "library_id": args[2].strip()}
    if tier == "tier2" and len(args) >= 4 and args[1].strip():
        # past the cap by admission's margin: a secret across the cap is read whole, so it
        # is redacted before the cut
        body = read_regular_file(args[3], max_write_bytes() + REDACT_MARGIN + 1)
        if body is None:
            return None
        if not body.strip():
            return None
        return {"tier": "tier2", "library_id": args[1].strip(), "topic": args[2],
                "body": body.decode("utf-8", "replace")}
    return None
