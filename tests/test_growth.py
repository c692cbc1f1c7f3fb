"""A store that stays small: journal compaction (blobs, references, packs) with reindex giving
the same projections, prune and the size cap, vacuum, the reads log folded in bounded memory,
and a spool drain that checkpoints as it goes. Real SQLite files, hooks as subprocesses."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing

import pytest

from conftest import BIN, ROOT, db_rows, ingest, journal_file, run, run_hook

WORDS = ("alpha beta gamma delta render state component layout stream value option route "
         "cache queue module export import build worker channel handler schema field").split()


def prose(seed: int, size: int) -> str:
    """Distinct documentation-like text of about `size` characters (plain words: redaction
    has nothing to look at, so a test can ingest many megabytes)."""
    rng = random.Random(seed)
    lines = [f"### Section {seed}"]
    total = 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(12)) + f" {seed}.{total}."
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def query_docs(n: int, text: str, *, session: str = "s-1", library: str = "/org/lib",
               query: str = "how to use it") -> dict:
    return {"session_id": session, "cwd": "/tmp", "hook_event_name": "PostToolUse",
            "tool_name": "mcp__context7__query-docs",
            "tool_input": {"libraryId": library, "query": query},
            "tool_response": [{"type": "text", "text": text}], "tool_use_id": f"toolu_{n:06d}"}


def resolve(n: int, name: str) -> dict:
    body = "Available Libraries:\n\n" + "\n----------\n".join(
        f"- Title: {name}{j}\n- Context7-compatible library ID: /org/{name}{j}\n"
        f"- Description: {prose(n * 10 + j, 300)}\n- Code Snippets: 10\n- Source Reputation: High\n"
        f"- Benchmark Score: 80.1\n- Versions: v1.0.0" for j in range(6))
    return {"session_id": "s-2", "cwd": "/tmp", "hook_event_name": "PostToolUse",
            "tool_name": "mcp__context7__resolve-library-id",
            "tool_input": {"libraryName": f"{name}0", "query": "x"},
            "tool_response": [{"type": "text", "text": body}], "tool_use_id": f"toolu_r{n:05d}"}


def journal(db, events) -> None:
    """What the capture hook does with each payload, on one journal connection."""
    from memhooks.capture.payload import prepare
    from memhooks.store.connect import connect_journal
    from memhooks.store.journal import append

    with closing(connect_journal(str(db))) as conn:
        for ev in events:
            raw = json.dumps(ev).encode()
            payload, error = prepare(raw, len(raw))
            append(conn, payload, size=len(raw), project="/tmp", error=error,
                   hook_event_name="PostToolUse")


def snapshot(db) -> dict:
    from memhooks.store.connect import connect

    with closing(connect(str(db))) as conn:
        return {
            "docs": sorted(r[0] for r in conn.execute("SELECT content_hash FROM documents")),
            "tier1": sorted(tuple(r) for r in conn.execute(
                "SELECT project, name_key, library_id, origin FROM tier1")),
            "tier2": sorted(tuple(r) for r in conn.execute(
                "SELECT t.library_key, t.topic_key, d.content_hash FROM tier2 t"
                " JOIN documents d ON d.id = t.document_id")),
            "captures": conn.execute("SELECT count(*) FROM captures").fetchone()[0],
            "libraries": conn.execute("SELECT count(*) FROM libraries").fetchone()[0],
        }


def reindex(db) -> None:
    from memhooks.ingest.pipeline import reindex as do_reindex
    from memhooks.store.connect import connect

    with closing(connect(str(db))) as conn:
        do_reindex(conn, str(db))


def pack_all(db) -> int:
    from memhooks.store.connect import connect
    from memhooks.store.packs import pack_settled

    with closing(connect(str(db))) as conn:
        return pack_settled(conn, min_events=1)


def mixed_events(n: int, distinct: int) -> list[dict]:
    events = []
    for i in range(n):
        k = i % distinct
        if k % 5 == 4:
            events.append(resolve(i, f"lib{k}"))
        else:
            events.append(query_docs(i, prose(k, 3000), session=f"s-{i // 7}",
                                     query=f"topic {k}" + (" again" if i % 3 == 0 else "")))
    return events


# ----------------------------------------------------------------------------- compaction

def test_a_repeat_is_journaled_as_a_small_reference(store):
    """Three captures of one page through the real hook: the text is kept once (a blob), each
    event's payload is a reference, and the journal is a fraction of three raw payloads."""
    text = prose(1, 40000)
    for n in range(3):
        r = run_hook("post-tool-use", query_docs(n, text, session=f"s-{n}"),
                     env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
        assert r.returncode == 0
    ingest(store)
    rows = db_rows(store, "SELECT typeof(payload), length(payload), state FROM events ORDER BY id")
    assert [(t, s) for t, _n, s in rows] == [("blob", "done")] * 3
    assert all(n < 600 for _t, n, _s in rows)
    blobs = db_rows(store, "SELECT bytes, length(data) FROM blobs")
    assert len(blobs) == 1 and blobs[0][0] >= len(text)
    assert db_rows(store, "SELECT count(*) FROM captures") == [(3,)]
    before = snapshot(store)
    reindex(store)
    assert snapshot(store) == before


def test_packs_hold_settled_events_and_reindex_rebuilds_the_same(store):
    ingest(store)
    journal(store, mixed_events(400, 40))
    ingest(store)
    before = snapshot(store)
    assert before["captures"] == 400 and before["tier1"] and before["tier2"] and before["libraries"]
    assert pack_all(store) == 399  # the highest row stays: new ids continue after it
    assert db_rows(store, "SELECT count(*) FROM events") == [(1,)]
    assert db_rows(store, "SELECT sum(events) FROM event_packs") == [(399,)]
    reindex(store)
    assert snapshot(store) == before
    # and packed again, nothing left pending
    assert db_rows(store, "SELECT count(*) FROM event_packs WHERE pending = 1") == [(0,)]
    assert db_rows(store, "SELECT count(*) FROM events WHERE state = 'pending'") == [(0,)]
    assert db_rows(store, "SELECT count(*) FROM events") == [(1,)]
    # events captured after the packs get new ids, after every packed one
    journal(store, [query_docs(9999, prose(9999, 2000))])
    ingest(store)
    top = db_rows(store, "SELECT max(last_id) FROM event_packs")[0][0]
    assert db_rows(store, "SELECT min(id) FROM events")[0][0] > top


def test_packs_hold_at_most_pack_events_each_and_are_never_merged(store, monkeypatch):
    from memhooks.store import packs

    monkeypatch.setattr(packs, "PACK_EVENTS", 50)
    ingest(store)
    for k in range(3):
        journal(store, [query_docs(k * 40 + i, prose(i, 2000), session=f"m{k}") for i in range(40)])
        ingest(store)
        pack_all(store)
    sizes = [r[0] for r in db_rows(store, "SELECT events FROM event_packs ORDER BY first_id")]
    assert sum(sizes) == 119 and max(sizes) <= 50 and len(sizes) >= 3, sizes
    before = snapshot(store)
    reindex(store)
    assert snapshot(store) == before



def test_a_reindex_keeps_the_later_fetch_when_a_pack_rounds_its_time(store):
    """A pack keeps times to the millisecond; the newest event stays unpacked. Two fetches of
    one topic within a millisecond: the packed one's time rounds up past the later one's,
    and the later fetch must still be tier2's answer, before and after a reindex."""
    ingest(store)
    journal(store, [query_docs(i, prose(i, 2000)) for i in range(2)])
    minute_ago = int(time.time()) - 60
    with closing(sqlite3.connect(journal_file(store))) as conn, conn:
        first, second = [r[0] for r in conn.execute("SELECT id FROM events ORDER BY id")]
        conn.execute("UPDATE events SET received_at = ? WHERE id = ?", (minute_ago + 0.0006, first))
        conn.execute("UPDATE events SET received_at = ? WHERE id = ?", (minute_ago + 0.0008, second))
    ingest(store)
    assert pack_all(store) == 1  # the first one; the newest stays in `events`
    [(later_doc,)] = db_rows(store, f"SELECT document_id FROM captures WHERE event_id = {second}")
    [(later,)] = db_rows(store, f"SELECT content_hash FROM documents WHERE id = {later_doc}")
    before = snapshot(store)["tier2"]
    assert [h for (_lib, _topic, h) in before] == [later]
    reindex(store)
    assert snapshot(store)["tier2"] == before


def test_a_packed_event_keeps_its_tool_use_id_whole(store):
    from memhooks.store import packs
    from memhooks.store.connect import connect

    ingest(store)
    journal(store, [query_docs(i, prose(i, 1500), session="whole") for i in range(5)])
    ingest(store)
    pack_all(store)
    [(data,)] = db_rows(store, "SELECT data FROM event_packs")
    text = packs._decompress(data).decode("utf-8")
    assert all(f"toolu_{i:06d}" in text for i in range(4)) and '"#' not in text
    with closing(connect(str(store))) as conn:
        assert packs.tool_use_ids(conn, "whole") == {packs.tool_use_digest(f"toolu_{i:06d}") for i in range(5)}


def test_a_pack_written_with_digest_ids_still_answers_and_reindexes(store):
    """Packs written by earlier versions hold 48-bit digests of the tool_use ids: the
    transcript import still finds those calls, and a reindex gives the same projections."""
    from memhooks.store import packs
    from memhooks.store.connect import connect

    ingest(store)
    journal(store, [query_docs(i, prose(i, 1500), session="old") for i in range(6)])
    ingest(store)
    pack_all(store)
    [(pack, data)] = db_rows(store, "SELECT id, data FROM event_packs")
    text = packs._decompress(data).decode("utf-8")
    for i in range(5):
        text = text.replace(f"toolu_{i:06d}", packs.tool_use_digest(f"toolu_{i:06d}"))
    with closing(sqlite3.connect(journal_file(store))) as conn, conn:
        conn.execute("UPDATE event_packs SET data = ? WHERE id = ?", (packs._compress(text.encode()), pack))
    before = snapshot(store)
    with closing(connect(str(store))) as conn:
        assert packs.tool_use_ids(conn, "old") == {packs.tool_use_digest(f"toolu_{i:06d}") for i in range(6)}
    reindex(store)
    assert snapshot(store) == before



def test_a_heal_projects_packed_events_again(store):
    """A damaged memhooks.db is moved aside and rebuilt from the journal: packed events too."""
    ingest(store)
    journal(store, mixed_events(120, 30))
    ingest(store)
    pack_all(store)
    before = snapshot(store)
    with open(store, "r+b") as fh:
        fh.write(b"garbage!" * 16)
    r = run([sys.executable, "-m", "memhooks.cli.main", "stats"])
    assert r.returncode in (0, 1)
    ingest(store)
    after = snapshot(store)
    assert (after["docs"], after["tier2"], after["captures"]) == (
        before["docs"], before["tier2"], before["captures"])


def test_packs_and_bodies_of_a_damaged_journal_are_salvaged(store):
    """A journal damaged in its `events` pages: capture goes on in a fresh one, and the
    ingester copies back the packs and the bodies they refer to; reindex rebuilds from them."""
    from memhooks.store import health

    ingest(store)
    events = mixed_events(120, 30)
    journal(store, events + [dict(events[0], tool_use_id="toolu_last")])  # the row left unpacked:
    ingest(store)  # a repeat, so the damaged page loses no document
    pack_all(store)
    before = snapshot(store)
    jf = journal_file(store)
    conn = sqlite3.connect(str(jf))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'events'")]
    conn.close()
    data = bytearray(jf.read_bytes())
    for page in pages:
        start = (page - 1) * page_size
        data[start + 8:start + 400] = os.urandom(392)
    jf.write_bytes(bytes(data))
    assert health.heal_journal(str(store), "test")
    r = subprocess.run([sys.executable, str(ROOT / "src" / "memhooks" / "_entry.py"), "ingest"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert db_rows(jf, "SELECT sum(events) FROM event_packs") == [(120,)]
    assert db_rows(jf, "SELECT count(*) FROM blobs")[0][0] > 0
    reindex(store)
    after = snapshot(store)
    assert (after["docs"], after["tier2"]) == (before["docs"], before["tier2"])


def test_packed_events_count_in_stats_and_the_transcript_import(store):
    from memhooks.store import packs, queries, stats_queries
    from memhooks.store.connect import connect

    ingest(store)
    journal(store, [query_docs(i, prose(i, 1500), session="sess-a") for i in range(30)])
    ingest(store)
    pack_all(store)
    with closing(connect(str(store))) as conn:
        ids = packs.tool_use_ids(conn, "sess-a")
        states = {r["state"]: r["count"] for r in stats_queries.stats_events_by_state(conn, None)}
        counts = queries.journal_counts(conn, time.time())
    assert ids == {packs.tool_use_digest(f"toolu_{i:06d}") for i in range(30)}
    assert states == {"done": 30} and counts["total"] == 30


def test_packed_events_can_be_dropped_by_a_rule(store):
    """packs.rewrite_packs (for `forget`): the events a rule drops leave the packs; the rest
    stay, and reindex rebuilds from them only."""
    from memhooks.store import packs
    from memhooks.store.connect import connect
    from memhooks.store.sqlite_file import transaction

    ingest(store)
    journal(store, [query_docs(i, prose(i, 2000), session="keep" if i % 2 else "drop", query=f"q{i}")
                    for i in range(20)])
    ingest(store)
    pack_all(store)
    with closing(connect(str(store))) as conn:
        with transaction(conn):
            assert packs.rewrite_packs(conn, lambda ev: ev["session_id"] != "drop") == 10
        assert packs.tool_use_ids(conn, "drop") == set()
        assert len(packs.tool_use_ids(conn, "keep")) == 10
        packs.pack_settled(conn, min_events=1)
    reindex(store)
    assert db_rows(store, "SELECT count(*) FROM captures") == [(10,)]


def _every_journal_text(db) -> str:
    """Everything the journal holds, decompressed: events' payloads, blobs, packs."""
    import zlib

    from memhooks.store.packs import pack_lines

    conn = sqlite3.connect(journal_file(db))
    out = []
    for (payload,) in conn.execute("SELECT payload FROM events"):
        out.append(zlib.decompress(payload).decode() if isinstance(payload, bytes) else payload)
    out += [zlib.decompress(d).decode() for (d,) in conn.execute("SELECT data FROM blobs")]
    for (data,) in conn.execute("SELECT data FROM event_packs"):
        out += [json.dumps(values) for values, _kind in pack_lines(data)]
    conn.close()
    return "\n".join(out)


def test_forget_reaches_the_compacted_journal(store):
    """A forgotten text and URL are in no blob, no reference, no packed event afterwards (the
    journal decompressed); the other documents' events and bodies stay."""
    marker = "zqxcompactmarker"
    ingest(store)
    events = [query_docs(i, prose(i, 3000), query=f"keep {i}") for i in range(80)]
    for i in range(3):
        ev = query_docs(100 + i, f"{marker} setup guide. " + prose(500, 3000), library="/acme/forgetme",
                        query=f"{marker} setup")
        events.insert(10 + i * 20, ev)
    journal(store, events)
    ingest(store)
    pack_all(store)
    assert marker in _every_journal_text(store).replace("\\n", "\n")
    r = run([sys.executable, "-m", "memhooks.cli.main", "forget", "--library", "/acme/forgetme", "--yes"])
    assert r.returncode == 0, r.stderr
    left = _every_journal_text(store)
    assert marker not in left and "forgetme" not in left
    assert db_rows(store, "SELECT count(*) FROM documents") == [(80,)]
    reindex(store)
    assert db_rows(store, "SELECT count(*) FROM documents") == [(80,)]
    assert db_rows(store, "SELECT count(*) FROM captures") == [(80,)]


def test_a_marker_key_in_a_payload_is_kept_whole(store):
    """Outside text that already holds our reference key is never read as a reference."""
    ev = query_docs(1, prose(1, 3000))
    ev["tool_input"]["memhooks_blob"] = "0" * 64
    journal(store, [ev])
    ingest(store)
    assert db_rows(store, "SELECT typeof(payload) FROM events") == [("text",)]
    before = snapshot(store)
    pack_all(store)
    reindex(store)
    assert snapshot(store) == before


def test_pruned_bodies_leave_references_that_reindex_skips(store):
    from memhooks.store.connect import connect
    from memhooks.store.prune import prune

    ingest(store)
    journal(store, [query_docs(i, prose(i % 2, 5000), query=f"q{i % 2}") for i in range(6)])
    ingest(store)
    with closing(connect(str(store))) as conn:
        old = time.time() - 7200  # the first document: neither read nor captured for 2 hours
        conn.execute("UPDATE documents SET created_at_epoch = ? WHERE id = 1", (old,))
        conn.execute("UPDATE capture_rows SET captured_at = ? WHERE document_id = 1", (old,))
        report = prune(conn, str(store), older_than_s=3600)
    assert report.documents == 1 and report.bodies == 0
    assert db_rows(store, "SELECT count(*) FROM documents") == [(1,)]
    assert db_rows(store, "SELECT count(*) FROM blobs") == [(1,)]
    reindex(store)
    assert db_rows(store, "SELECT count(*) FROM documents") == [(1,)]
    from memhooks.store.compact import PRUNED

    skipped = db_rows(store, "SELECT sum(n) FROM pack_tally WHERE error = ?", (PRUNED,))[0][0] or 0
    skipped += db_rows(store, "SELECT count(*) FROM events WHERE error = ?", (PRUNED,))[0][0]
    assert skipped == 3


# ----------------------------------------------------------------------------- prune

def _doc_ids(db) -> set:
    return {r[0] for r in db_rows(db, "SELECT id FROM documents")}


def _pin(db, project: str, library_id: str, version: str) -> None:
    """A current project (warmed) whose lockfile pins `library_id` at `version`."""
    from memhooks.store.connect import connect

    with closing(connect(str(db))) as conn:
        conn.execute("INSERT INTO warm_state (project, fingerprint, files, dirs, ranked, warmed_at)"
                     " VALUES (?, 'f', '[]', '[]', '[]', ?)", (project, time.time()))
        conn.execute("INSERT INTO tier1 (project, name_key, loose_key, name, library_id, version,"
                     " versioned_id, origin, resolved_at, expires_at) VALUES (?, 'lib', 'lib', 'lib',"
                     " ?, ?, ?, 'warm-api', ?, ?)",
                     (project, library_id, version, f"{library_id}/v{version}", time.time(),
                      time.time() + 3600))


def test_prune_dry_run_older_than_and_protected_documents(store, tmp_path):
    ingest(store)
    events = [query_docs(i, prose(i, 4000), query=f"q{i}") for i in range(8)]
    events.append(query_docs(8, prose(8, 4000), library="/org/lib/v2.0.0", query="pinned"))
    journal(store, events)
    ingest(store)
    _pin(store, str(tmp_path / "proj"), "/org/lib", "2.0.0")
    before = _doc_ids(store)
    r = run([sys.executable, "-m", "memhooks.cli.main", "prune", "--older-than", "0s", "--dry-run"])
    assert r.returncode == 0, r.stderr
    assert b"would evict 8 documents" in r.stdout
    assert _doc_ids(store) == before
    r = run([sys.executable, "-m", "memhooks.cli.main", "prune", "--older-than", "0s"])
    assert r.returncode == 0, r.stderr
    left = db_rows(store, "SELECT library_id FROM documents")
    assert left == [("/org/lib/v2.0.0",)]  # the pinned version of a current project stays
    r = run([sys.executable, "-m", "memhooks.cli.main", "prune", "--older-than", "soon"])
    assert r.returncode == 2 and b"not a duration" in r.stderr


def test_prune_max_size_evicts_never_read_first_then_least_recently_read(store):
    from memhooks.store.connect import connect
    from memhooks.store.prune import prune
    from memhooks.store.vacuum import store_bytes

    ingest(store)
    journal(store, [query_docs(i, prose(i, 30000), query=f"q{i}") for i in range(60)])
    ingest(store)
    ids = sorted(_doc_ids(store))
    read_old, read_new = ids[0], ids[1]
    with closing(connect(str(store))) as conn:
        conn.execute("UPDATE documents SET last_accessed_epoch = ? WHERE id = ?", (time.time() - 500, read_old))
        conn.execute("UPDATE documents SET last_accessed_epoch = ? WHERE id = ?", (time.time(), read_new))
        size = store_bytes(str(store))
        report = prune(conn, str(store), max_bytes=size // 2)
    left = _doc_ids(store)
    assert read_old in left and read_new in left  # read documents outlive never-read ones
    assert ids[-1] in left  # the never-read ones go oldest first
    assert ids[2] not in left
    assert report.after <= size // 2 and report.documents == len(ids) - len(left)


@pytest.mark.slow
def test_the_cap_holds_with_three_times_its_worth_of_documents(store, tmp_path, monkeypatch):
    """The detached ingester holds the store folder to MEMHOOKS_MAX_SIZE while 3x the cap's
    worth of distinct documents stream in; the last-read document and the document of a
    current project's pinned version are still there."""
    from memhooks.capture import ingester

    cap = 8 * 1000 * 1000
    monkeypatch.setenv("MEMHOOKS_MAX_SIZE", "8MB")
    monkeypatch.setenv("MEMHOOKS_NO_SPAWN", "1")
    ingest(store)
    _pin(store, str(tmp_path / "proj"), "/org/pinned", "1.2.3")
    size, n = 60000, 0
    journal(store, [query_docs(0, prose(10**6, size), library="/org/pinned/v1.2.3", query="pin")])
    read_hash = None
    while n * size < 3 * cap:
        journal(store, [query_docs(n + 1 + k, prose(n + k, size), query=f"q{n + k}") for k in range(20)])
        n += 20
        ingester.main(["--background"])
        if read_hash is None and n >= 40:
            # a lookup reads one of the early documents (through the reads log, as lc-cache-lookup-docs)
            r = run(["bash", str(BIN / "lc-cache-lookup-docs"), "/org/lib", "q5"])
            assert r.returncode == 0 and b"Section 5" in r.stdout
            read_hash = db_rows(store, "SELECT content_hash FROM documents WHERE topic = 'q5'")[0][0]
    folder = store.parent
    total = sum(os.lstat(os.path.join(d, f)).st_blocks * 512
                for d, _s, files in os.walk(folder) for f in files)
    assert 0.5 * cap <= total <= 1.1 * cap, total
    assert db_rows(store, "SELECT count(*) FROM documents WHERE content_hash = ?", (read_hash,)) == [(1,)]
    assert db_rows(store, "SELECT count(*) FROM documents WHERE library_id = '/org/pinned/v1.2.3'") == [(1,)]
    log = folder / "memhooks.log"
    assert "size cap" in log.read_text() and "Traceback" not in log.read_text()


# ----------------------------------------------------------------------------- vacuum

def _old_style(db) -> None:
    """Turn a store into one made before incremental vacuum (auto_vacuum off, 4 KiB pages)."""
    for path in (db, journal_file(db)):
        c = sqlite3.connect(path, isolation_level=None)
        c.execute("PRAGMA journal_mode = DELETE")
        c.execute("PRAGMA page_size = 4096")
        c.execute("PRAGMA auto_vacuum = NONE")
        c.execute("VACUUM")
        c.execute("PRAGMA journal_mode = WAL")
        c.close()


def test_vacuum_swaps_in_a_compact_copy_in_incremental_mode(store):
    ingest(store)
    journal(store, mixed_events(60, 20))
    ingest(store)
    pack_all(store)
    _old_style(store)
    before = snapshot(store)
    r = run([sys.executable, "-m", "memhooks.cli.main", "doctor"])
    assert b"run `memhooks vacuum` once" in r.stdout
    r = run([sys.executable, "-m", "memhooks.cli.main", "vacuum"])
    assert r.returncode == 0, r.stderr
    assert b"rewritten and swapped in" in r.stdout
    for path, page in ((store, 8192), (journal_file(store), 16384)):
        c = sqlite3.connect(path)
        assert c.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        assert c.execute("PRAGMA page_size").fetchone()[0] == page
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        c.close()
        assert os.stat(path).st_mode & 0o777 == 0o600
    assert snapshot(store) == before
    assert not [p for p in os.listdir(store.parent) if "vacuum-tmp" in p or p.endswith("-journal")]
    reindex(store)
    assert snapshot(store) == before


def test_vacuum_of_a_store_another_process_holds_open_is_done_in_place(store):
    ingest(store)
    journal(store, mixed_events(20, 10))
    ingest(store)
    before = snapshot(store)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         f"c = sqlite3.connect({str(store)!r}); c.execute('SELECT count(*) FROM documents').fetchone()\n"
         "print('open', flush=True); sys.stdin.readline()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline() == b"open\n"
        from memhooks.store.vacuum import vacuum

        result = vacuum(str(store), wait_s=0.5)
    finally:
        holder.communicate(b"\n", timeout=10)
    assert result["how"] == "in place"
    assert sqlite3.connect(store).execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    assert snapshot(store) == before


# ----------------------------------------------------------------------------- reads log

FOLD = """
import os, sys, time
sys.path.insert(0, {src!r})
from memhooks.ingest.pipeline import fold_reads_log
from memhooks.store.connect import connect

def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) * 1024

db = {db!r}
conn = connect(db)
before = hwm()
n = fold_reads_log(conn, db)
print(n, before, hwm())
"""


def write_reads_log(path, megabytes: int, projects: int = 50) -> int:
    """A reads log of about `megabytes` MB of well-formed lines; returns the line count."""
    lines = []
    for i in range(4000):
        kind = "tier1" if i % 2 else "tier2"
        lines.append(f"{kind}\thit\t{1700000000 + i}.000\t-\t/home/dev/project-{i % projects}\n")
    block = "".join(lines).encode()
    reps = megabytes * 1024 * 1024 // len(block) + 1
    with open(path, "wb") as fh:
        for _ in range(reps):
            fh.write(block)
    return reps * len(lines)


@pytest.mark.slow
def test_a_large_reads_log_folds_in_bounded_memory(store):
    """64 MB of lines (the benchmark does 512 MB): the fold streams it; the peak RSS stays
    under 100 MB and grows by a small part of the file's size."""
    ingest(store)
    log = store.parent / "reads.log"
    lines = write_reads_log(log, 64)
    r = run([sys.executable, "-c", FOLD.format(src=str(ROOT / "src"), db=str(store))], timeout=300)
    assert r.returncode == 0, r.stderr
    n, before, peak = map(int, r.stdout.split())
    assert n == lines
    assert peak < 100 * 1024 * 1024 and peak - before < 24 * 1024 * 1024, (before, peak)
    assert not log.exists() or log.stat().st_size == 0
    assert not (store.parent / "reads.log.folding").exists()
    total = db_rows(store, "SELECT sum(count) FROM counters")[0][0]
    assert total == lines


def test_lines_appended_while_the_log_is_folded_are_kept(store):
    from memhooks.ingest.pipeline import fold_reads_log
    from memhooks.store import reads
    from memhooks.store.connect import connect

    ingest(store)
    for i in range(5):
        assert reads.note(str(store), "tier1", "hit", f"/p{i}")
    taken = reads.Taken(str(store))
    assert taken.take()  # renamed aside, as a fold does first
    assert reads.note(str(store), "tier1", "miss", "/p9")  # a lookup meanwhile: a new file
    with closing(connect(str(store))) as conn:
        assert fold_reads_log(conn, str(store)) == 5  # the taken file first
        assert fold_reads_log(conn, str(store)) == 1
    assert db_rows(store, "SELECT outcome, sum(count) FROM counters GROUP BY outcome") == [
        ("hit", 5), ("miss", 1)]


def test_a_torn_or_overlong_line_is_skipped_without_holding_it(store):
    from memhooks.store import reads

    ingest(store)
    log = store.parent / "reads.log"
    good = b"tier1\thit\t1700000000.000\t-\t/p\n"
    log.write_bytes(good + b"x" * (3 * 1024 * 1024) + b"\n" + good + b"tier1\thit\tnan\t-\t/p\n"
                    + b"tier2\tmiss\t1700000001.0\t-\t/q")
    taken = reads.Taken(str(store))
    assert taken.take()
    assert [(r["kind"], r["outcome"]) for r in taken.records()] == [
        ("tier1", "hit"), ("tier1", "hit"), ("tier2", "miss")]


# ----------------------------------------------------------------------------- spool drain

def test_draining_a_large_spool_checkpoints_as_it_goes(store, monkeypatch):
    """After a full disk clears: 24 MB of spooled events are journaled, and the journal's WAL
    never holds much more than one checkpoint step (4 MB) of them."""
    from memhooks.store import journal as jmod
    from memhooks.store.connect import connect

    ingest(store)
    body = prose(1, 256 * 1024)
    for i in range(96):
        payload = json.dumps(query_docs(i, body + str(i)))
        assert jmod.spool(str(store), payload, size=len(payload), project="/tmp", error=None,
                          hook_event_name="PostToolUse")
    wal = str(journal_file(store)) + "-wal"
    peak, stop = [0], threading.Event()

    def watch():
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], os.path.getsize(wal))
            except OSError:
                pass
            time.sleep(0.002)

    t = threading.Thread(target=watch)
    t.start()
    try:
        with closing(connect(str(store))) as conn:
            assert jmod.drain_spool(conn, str(store)) == 96
    finally:
        stop.set()
        t.join()
    assert not os.path.exists(wal) or os.path.getsize(wal) == 0
    # (without the checkpoints the WAL grows to SQLite's 1000-page autocheckpoint: 16 MB here)
    assert 0 < peak[0] <= 2 * jmod.DRAIN_CHECKPOINT_BYTES, peak[0]
    assert db_rows(store, "SELECT count(*) FROM events WHERE state = 'pending'") == [(96,)]


# ----------------------------------------------------------------------------- settings, stats, doctor

def test_size_settings():
    from memhooks.config import DEFAULT_MAX_STORE_BYTES, parse_size

    assert parse_size("500MB") == 500_000_000
    assert parse_size("1GiB") == 1024**3
    assert parse_size(" 20 mb ") == 20_000_000
    assert parse_size("1.5G") == 1_500_000_000
    assert parse_size("1048576") == 1048576
    for bad in ("", "MB", "12 parsecs", "-5MB", "1.2.3GB", None):
        assert parse_size(bad) is None
    assert DEFAULT_MAX_STORE_BYTES == 1024**3


def test_cap_from_the_environment(monkeypatch):
    from memhooks.config import max_store_bytes

    monkeypatch.setenv("MEMHOOKS_MAX_SIZE", "20MB")
    assert max_store_bytes() == 20_000_000
    monkeypatch.setenv("MEMHOOKS_MAX_SIZE", "lots")
    assert max_store_bytes() == 1024**3


def test_stats_and_doctor_show_bytes_per_file_and_the_cap(store, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_MAX_SIZE", "300MB")
    journal(store, mixed_events(10, 5))
    ingest(store)
    r = run([sys.executable, "-m", "memhooks.cli.main", "stats", "--json"])
    assert r.returncode == 0, r.stderr
    db = json.loads(r.stdout)["db"]
    names = {f["name"]: f["bytes"] for f in db["files"]}
    assert names["db"] > 0 and names["journal"] > 0 and "journal-wal" in names and "spool" in names
    assert db["cap_bytes"] == 300_000_000 and db["store_bytes"] == sum(names.values())
    assert db["frees_pages"] is True
    r = run([sys.executable, "-m", "memhooks.cli.main", "stats"])
    assert b"On disk" in r.stdout and b"cap" in r.stdout
    r = run([sys.executable, "-m", "memhooks.cli.main", "doctor"])
    line = next(x for x in r.stdout.decode().splitlines() if "size" in x and "cap" in x)
    assert "286.1 MiB cap" in line and "journal" in line and "db" in line
