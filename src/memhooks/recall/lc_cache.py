"""tier1/tier2 cache: lookups and writes, and the seed-compatible lc-cache-* commands.

Standard library only. The commands always exit 0 and print nothing on a miss
or on any problem; problems go to memhooks.log.
"""

from __future__ import annotations

import os
import sys
import time

from memhooks.names import library_key, lookup_keys, loose_key, topic_key

CACHE_WRITE_EVENT = "CacheWrite"


# --------------------------------------------------------------------------- lookups

def find_tier1(conn, name: str, project: str, now: float | None = None) -> dict | None:
    """The freshest positive answer for `name`: this project's tier1 first, then
    global knowledge (other projects' tier1, then captured/API library results)."""
    now = time.time() if now is None else now
    keys = lookup_keys(name)
    if not keys:
        return None
    marks = ",".join("?" * len(keys))
    cols = "library_id, version, versioned_id, origin, matched"
    fresh = " AND expires_at > ? AND library_id IS NOT NULL ORDER BY resolved_at DESC LIMIT 1"
    loose = loose_key(name)
    attempts = (
        ("project", f"project = ? AND name_key IN ({marks})", (project or "", *keys)),
        ("project", "project = ? AND loose_key = ?", (project or "", loose)),
        ("global", f"name_key IN ({marks})", tuple(keys)),
        ("global", "loose_key = ?", (loose,)),
    )
    row = None
    for scope, where, params in attempts:
        row = conn.execute(f"SELECT {cols} FROM tier1 WHERE {where}{fresh}", (*params, now)).fetchone()
        if row is not None:
            break
    if row is not None:
        return {
            "name": name, "library_id": row[0], "version": row[1], "versioned_id": row[2],
            "origin": row[3], "matched": row[4], "scope": scope,
        }
    lib = find_library(conn, name)
    if lib is not None:
        return {"name": name, "library_id": lib, "version": None, "versioned_id": None,
                "origin": "libraries", "matched": "exact", "scope": "global"}
    return None


def find_library(conn, name: str) -> str | None:
    """An exact title or ID-tail match among known Context7 libraries."""
    keys = lookup_keys(name)
    bare = [k.rsplit("/", 1)[-1] for k in keys]
    allk = list(dict.fromkeys(keys + bare))
    marks = ",".join("?" * len(allk))
    row = conn.execute(
        f"SELECT library_id FROM libraries WHERE title_key IN ({marks}) OR tail_key IN ({marks})"
        " ORDER BY (title_key IN ({marks})) DESC, coalesce(benchmark_score, 0) DESC,"
        " coalesce(trust_score, 0) DESC, code_snippets DESC LIMIT 1".replace("{marks}", marks),
        (*allk, *allk, *allk),
    ).fetchone()
    return row[0] if row else None


def find_tier2(conn, library_id: str, topic: str, now: float | None = None) -> tuple[int, str] | None:
    now = time.time() if now is None else now
    row = conn.execute(
        "SELECT d.id, d.content FROM tier2 t JOIN documents d ON d.id = t.document_id"
        " WHERE t.library_key = ? AND t.topic_key = ? AND t.expires_at > ?",
        (library_key(library_id), topic_key(topic), now),
    ).fetchone()
    return (row[0], row[1]) if row else None


def _pending(conn) -> bool:
    return conn.execute("SELECT 1 FROM events WHERE state = 'pending' LIMIT 1").fetchone() is not None


def _find_fresh(conn, find, on_pending):
    """Try `find`; on a miss with pending events, let `on_pending` ingest them, try again."""
    result = find()
    if result is None and on_pending is not None and _pending(conn):
        on_pending()
        result = find()
    return result


def lookup(conn, name: str, project: str, *, on_pending=None) -> dict | None:
    """tier1 lookup that counts a hit or a miss."""
    from memhooks.store.projections import count
    from memhooks.store.connect import transaction

    hit = _find_fresh(conn, lambda: find_tier1(conn, name, project), on_pending)
    with transaction(conn):
        count(conn, project=project, tier="tier1", outcome="hit" if hit else "miss")
    return hit


def lookup_docs(conn, library_id: str, topic: str, project: str, *,
                on_pending=None) -> tuple[int, str] | None:
    """tier2 lookup that counts a hit or a miss, and a retrieval of the document."""
    from memhooks.store.projections import count, touch_documents
    from memhooks.store.connect import transaction

    hit = _find_fresh(conn, lambda: find_tier2(conn, library_id, topic), on_pending)
    with transaction(conn):
        count(conn, project=project, tier="tier2", outcome="hit" if hit else "miss")
        if hit:
            touch_documents(conn, [hit[0]])
    return hit


# --------------------------------------------------------------------------- writes

def apply_write(conn, record: dict, *, event_id: int | None, project: str, now: float) -> None:
    """Apply one journaled cache write to the projections (inside the caller's transaction)."""
    from memhooks import config
    from memhooks.store.projections import add_capture, upsert_document, upsert_tier1, upsert_tier2

    tier = record.get("tier")
    if tier == "tier1":
        upsert_tier1(conn, project=project, name=record["name"], library_id=record["library_id"],
                     origin="write", matched="write", ttl_s=config.tier1_ttl_s(), now=now)
    elif tier == "tier2":
        lid, topic = record["library_id"], record["topic"]
        doc_id, _ = upsert_document(
            conn, project=project, source=lid, source_tool="context7", tool="lc-cache-write",
            content=record["body"], title=f"{lid} — {topic}", type="library-docs",
            library_id=lid, topic=topic, max_bytes=config.max_write_bytes(), now=now,
        )
        if doc_id is None:
            return  # the user forgot this text
        if event_id is not None:
            add_capture(conn, event_id=event_id, document_id=doc_id, project=project,
                        session_id=None, tool_name="lc-cache-write", captured_at=now)
        upsert_tier2(conn, library_id=lid, topic=topic, document_id=doc_id, origin="write",
                     ttl_s=config.tier2_ttl_s(), now=now)
    else:
        raise ValueError(f"unknown cache tier {tier!r}")


def write(conn, record: dict, project: str) -> int:
    """Journal a cache write, then apply it, in one transaction. Returns the event id."""
    import json

    from memhooks.capture.journal import append
    from memhooks.redact import redact_text
    from memhooks.store.connect import transaction

    now = time.time()
    payload = json.dumps({"hook_event_name": CACHE_WRITE_EVENT, "cwd": project, **record},
                         ensure_ascii=False)
    payload = redact_text(payload)
    with transaction(conn):
        event_id = append(conn, payload, size=len(payload), project=project,
                          hook_event_name=CACHE_WRITE_EVENT, received_at=now)
        apply_write(conn, json.loads(payload), event_id=event_id, project=project, now=now)
        conn.execute("UPDATE events SET state = 'done', processed_at = ? WHERE id = ?",
                     (now, event_id))
    return event_id


# --------------------------------------------------------------------------- commands

def _open():
    """(connection, project), or None when there is no store yet: a lookup never creates one
    (no file, no folder, no log); the miss is the answer."""
    from memhooks.config import db_path, project_dir, store_exists
    from memhooks.store.connect import connect

    db = db_path()
    if not store_exists(db):
        return None
    return connect(db), project_dir()


def ingest_now(timeout: float = 20.0) -> None:
    """Run an ingester in a child process (it needs packages this hot path must not import)."""
    import subprocess

    from memhooks.capture.hooks import ENTRY

    python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
    subprocess.run([python, ENTRY, "ingest"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout,
                   check=False)


def _safe(fn, label: str):
    def run(args: list[str]) -> int:
        try:
            fn(args)
        except BaseException as exc:  # noqa: BLE001 - advisory commands: exit 0, say nothing
            try:
                from memhooks.log import log_exception

                log_exception(label)
                import sqlite3

                from memhooks.store.health import error_line, is_corruption

                if isinstance(exc, sqlite3.DatabaseError) and is_corruption(exc):
                    # A damaged store: heal it (moved aside, rebuilt from the journal) and
                    # say so in one line on stderr; stdout stays empty (a miss).
                    sys.stderr.write(error_line(exc) + "\n")
                    sys.stderr.flush()
            except BaseException:  # noqa: BLE001
                pass
        return 0
    return run


def _emit(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    if not data.endswith(b"\n"):
        data += b"\n"
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def _cmd_lookup(args: list[str]) -> None:
    if len(args) < 1 or not args[0].strip():
        return
    opened = _open()
    if opened is None:
        return
    conn, project = opened
    try:
        hit = lookup(conn, args[0], project, on_pending=ingest_now)
    finally:
        conn.close()
    if hit:
        _emit(hit["library_id"])


def _cmd_lookup_docs(args: list[str]) -> None:
    if len(args) < 2 or not args[0].strip():
        return
    opened = _open()
    if opened is None:
        return
    conn, project = opened
    try:
        hit = lookup_docs(conn, args[0], args[1], project, on_pending=ingest_now)
    finally:
        conn.close()
    if hit:
        sys.stdout.buffer.write(hit[1].encode("utf-8", "surrogatepass"))
        sys.stdout.flush()


def read_regular_file(path: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of a regular file; None for anything else. Opened non-blocking
    (a FIFO never blocks the open) and checked with fstat before a byte is read (a FIFO, a
    device such as /dev/zero, a socket or a folder is refused)."""
    import stat

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
        from memhooks.config import max_write_bytes

        body = read_regular_file(args[3], max_write_bytes() + 1)
        if body is None:
            return None
        if not body.strip():
            return None
        return {"tier": "tier2", "library_id": args[1].strip(), "topic": args[2],
                "body": body.decode("utf-8", "replace")}
    return None


def _cmd_write(args: list[str]) -> None:
    record = parse_write_args(args)
    if record is None:
        return
    from memhooks.config import db_path, project_dir
    from memhooks.store.connect import connect

    conn, project = connect(db_path()), project_dir()  # a write creates the store
    try:
        write(conn, record, project)
    finally:
        conn.close()


COMMANDS = {
    "lc-cache-lookup": _safe(_cmd_lookup, "lc-cache-lookup"),
    "lc-cache-lookup-docs": _safe(_cmd_lookup_docs, "lc-cache-lookup-docs"),
    "lc-cache-write": _safe(_cmd_write, "lc-cache-write"),
}


# The console scripts now import memhooks._console (the entry's lean start); these stay for
# wrappers generated by an install from before that.
def _console(cmd: str) -> None:
    try:
        code = COMMANDS[cmd](sys.argv[1:])
    except BaseException:  # noqa: BLE001
        code = 0
    sys.exit(code)


def console_lookup() -> None:
    _console("lc-cache-lookup")


def console_lookup_docs() -> None:
    _console("lc-cache-lookup-docs")


def console_write() -> None:
    _console("lc-cache-write")
