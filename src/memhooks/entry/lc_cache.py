"""The lc-cache-* commands (the seed's cache contract): lc-cache-lookup NAME, lc-cache-lookup-docs
LIBRARY_ID TOPIC, lc-cache-write tier1|tier2 .... Standard library only. They always exit 0 and
print nothing on a miss or on any problem (logged once to memhooks.log). A hit's path loads
memhooks.recall.lc_cache alone; a miss's (memhooks.recall.lc_miss), the docs' serving rules
and the write each load where they are needed."""

import os
import sqlite3
import sys

from memhooks.config import db_path, project_dir
from memhooks.entry._boundary import guard
from memhooks.gate import blocked
from memhooks.names import checked_library_id
from memhooks.recall.lc_cache import Unread, _store, read
from memhooks.store.queries import find_tier1
from memhooks.store.reads import note
from memhooks.store.sqlite_file import closing

USAGE = {
    "lc-cache-lookup": "usage: lc-cache-lookup NAME\n\nPrints the cached Context7 library ID for NAME (a package name) on a fresh hit,\n",
    "lc-cache-lookup-docs": "usage: lc-cache-lookup-docs LIBRARY_ID TOPIC\n\nPrints the cached docs for LIBRARY_ID and TOPIC on a fresh hit (4 h),\n",
    "lc-cache-write": ("usage: lc-cache-write tier1 NAME LIBRARY_ID\n"
                       "       lc-cache-write tier2 LIBRARY_ID TOPIC FILE\n\nWrites an entry to the cache (the body of tier2 from FILE),\n"),
}
USAGE_TAIL = ("else nothing: empty output is a miss. Always exits 0 (memhooks; the seed's cache contract).\n"
              "Writes go through the same checks as every capture; `memhooks --help` has the rest.\n")


def _damaged(fn, args: list[str]) -> None:
    """Run a command; a damaged store is healed (moved aside, rebuilt from the journal) and
    said in one line on stderr, stdout staying empty (a miss); then the boundary logs it."""
    try:
        fn(args)
    except sqlite3.DatabaseError as exc:
        from memhooks.store.health import error_line, is_corruption

        if is_corruption(exc):
            sys.stderr.write(error_line(exc) + "\n")
            sys.stderr.flush()
        raise


def _safe(fn, label: str):
    def run(args: list[str]) -> int:
        if args[:1] in (["-h"], ["--help"]):
            sys.stdout.write(USAGE[label] + USAGE_TAIL)
            sys.stdout.flush()
            return 0
        guard(label, _damaged, fn, args)
        return 0  # advisory commands: exit 0 whatever happened
    return run


def _reader() -> str:
    """Who runs a lookup command: the agent (its Bash tool gives it no terminal) or a person
    at a terminal, whose own reads are not the agent's."""
    return "user" if os.isatty(1) else "agent"


def _emit(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    if not data.endswith(b"\n"):
        data += b"\n"
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def _answer(db: str, find, from_pending):
    """`find(conn)` over the read-only projections; on a miss, the miss path (pending events
    of that key, a detached ingester started, a damaged file healed)."""
    found = read(db, find)
    if found is not None and not isinstance(found, Unread):
        return found
    from memhooks.recall import lc_miss  # a miss's path only: journal, logging, spawning

    return lc_miss.answer(db, found, find, lambda conn: from_pending(lc_miss, conn))


def _cmd_lookup(args: list[str]) -> None:
    if len(args) < 1 or not args[0].strip():
        return
    store = _store()
    if store is None:
        return

    db, project = store
    hit = _answer(db, lambda conn: find_tier1(conn, args[0], project),
                  lambda miss, conn: miss.pending_tier1(db, args[0]))

    # egress: an ID is printed only in its grammar (anything else is a miss)
    library_id = checked_library_id(hit["library_id"]) if hit else None
    note(db, "tier1", "hit" if library_id else "miss", project, origin=_reader())
    if library_id:
        _emit(library_id)


def _cmd_lookup_docs(args: list[str]) -> None:
    if len(args) < 2 or not args[0].strip():
        return
    store = _store()
    if store is None:
        return

    db, project = store
    from memhooks.recall.lookup_docs import find_docs  # the serving rules: only this command's path

    hit = _answer(db, lambda conn: find_docs(conn, args[0], args[1], project),
                  lambda miss, conn: miss.pending_tier2(db, conn, args[0], args[1]))
    note(db, "tier2", "hit" if hit else "miss", project, hit[2] if hit else "", origin=_reader())
    if hit:
        from memhooks.egress import fence

        # The docs body (the seed's contract), through egress: in a fence with a fresh marker,
        # control codes and ESC sequences removed, fence look-alike lines defused.
        _emit(fence(hit[1]))


def _cmd_write(args: list[str]) -> None:
    from memhooks.recall import lc_miss, lc_write  # the write's path only

    record = lc_write.parse_write_args(args)
    if record is None:
        return

    project = project_dir()
    db = db_path()
    if blocked(db, project):
        return  # excluded or paused: nothing is written
    conn = lc_miss.open_current(db)  # a write creates the store (its journal, at least)
    if conn is not None:
        with closing(conn):
            lc_write.write(conn, record, project)
        return
    lc_write.journal_write(db, record, project)  # new or behind: the ingester applies it
    lc_write.ingest_now()



COMMANDS = {
    "lc-cache-lookup": _safe(_cmd_lookup, "lc-cache-lookup"),
    "lc-cache-lookup-docs": _safe(_cmd_lookup_docs, "lc-cache-lookup-docs"),
    "lc-cache-write": _safe(_cmd_write, "lc-cache-write"),
}


def main(cmd: str, args: list[str]) -> int:
    return COMMANDS[cmd](args)
