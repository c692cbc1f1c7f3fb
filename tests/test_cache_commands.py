"""The lc-cache-* commands (the contract of the lc-cache-* scripts memhooks replaces: exit 0,
empty output on a miss) and the weaknesses they must not have."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing, contextmanager

import pytest

from conftest import BIN, console_script, db_rows, ingest, journal_file, load_payload, run, run_hook
from fences import unfence

SHIM = {name: ["bash", str(BIN / name)] for name in
        ("lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write")}

def docs_out(argv) -> bytes:
    """What a docs lookup printed, its fence taken off (b"" for a miss, which prints nothing)."""
    out = run(argv).stdout
    return unfence(out.decode()).encode() if out else out



def console(name):
    return [str(console_script(name))]


@pytest.fixture(params=["shim", "console"])
def cmd(request):
    return (lambda name: SHIM[name]) if request.param == "shim" else console


def test_write_then_lookup_round_trip(store, cmd):
    r = run(cmd("lc-cache-write") + ["tier1", "react", "/facebook/react"])
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    r = run(cmd("lc-cache-lookup") + ["react"])
    assert (r.returncode, r.stdout) == (0, b"/facebook/react\n")


def test_miss_is_empty_output_and_exit_zero(store, cmd):
    for argv in (["lc-cache-lookup", "nope"], ["lc-cache-lookup-docs", "/no/such", "topic"],
                 ["lc-cache-lookup"], ["lc-cache-lookup-docs", "/only-id"], ["lc-cache-write"],
                 ["lc-cache-write", "tier3", "a", "b"], ["lc-cache-write", "tier1", "onlyname"],
                 ["lc-cache-write", "tier2", "/a/b", "topic", "/no/such/file"]):
        r = run(cmd(argv[0]) + argv[1:])
        assert (r.returncode, r.stdout) == (0, b""), argv


def test_empty_body_writes_nothing(store, tmp_path, cmd):
    body = tmp_path / "empty.md"
    body.write_text("  \n")
    assert run(cmd("lc-cache-write") + ["tier2", "/a/b", "t", body]).returncode == 0
    assert run(cmd("lc-cache-lookup-docs") + ["/a/b", "t"]).stdout == b""


def test_names_are_case_insensitive_and_pep503(store):
    run(SHIM["lc-cache-write"] + ["tier1", "@Types/Node", "/definitelytyped/node"])
    assert run(SHIM["lc-cache-lookup"] + ["@types/node"]).stdout == b"/definitelytyped/node\n"
    run(SHIM["lc-cache-write"] + ["tier1", "Foo_Bar.baz", "/acme/foo-bar-baz"])
    for spelling in ("foo-bar-baz", "FOO_BAR_BAZ", "foo.bar-baz"):
        assert run(SHIM["lc-cache-lookup"] + [spelling]).stdout == b"/acme/foo-bar-baz\n", spelling


def test_tier2_keys_do_not_collide(store, tmp_path):
    """(ID, topic) pairs that one joined string would merge stay apart; an ID outside the
    Context7 grammar (`/a|b`) is refused by admission and answers nothing."""
    a, b, c = tmp_path / "a.md", tmp_path / "b.md", tmp_path / "c.md"
    a.write_text("body for /org/lib/v1 + c|d\n")
    b.write_text("body for /org/lib + v1/c|d\n")
    c.write_text("body for /a|b + c\n")
    run(SHIM["lc-cache-write"] + ["tier2", "/org/lib/v1", "c|d", a])
    run(SHIM["lc-cache-write"] + ["tier2", "/org/lib", "v1/c|d", b])
    run(SHIM["lc-cache-write"] + ["tier2", "/a|b", "c", c])
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/org/lib/v1", "c|d"]) == a.read_bytes()
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/org/lib", "v1/c|d"]) == b.read_bytes()
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/a|b", "c"]) == b""


def test_five_megabyte_body_round_trips_byte_for_byte(store, tmp_path):
    chunk = "```bash\necho \"$HOME\" 'single' `backtick` \\ $(whoami)\n```\n\ttab\n"
    body = (chunk * (5 * 1024 * 1024 // len(chunk) + 1))[: 5 * 1024 * 1024]
    f = tmp_path / "docs.md"
    f.write_bytes(body.encode())
    r = run(SHIM["lc-cache-write"] + ["tier2", "/vercel/next.js", "routing", f])
    assert (r.returncode, r.stdout) == (0, b"")
    # the body whole, in its fence (which ends it with one newline)
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/vercel/next.js", "routing"]) \
        == f.read_bytes().rstrip(b"\n") + b"\n"


def test_many_large_entries_keep_the_store_alive(store, tmp_path):
    for i in range(3):
        f = tmp_path / f"{i}.md"
        f.write_text(f"# doc {i}\n" + ("x" * 60 * 1024))
        run(SHIM["lc-cache-write"] + ["tier2", f"/org/lib{i}", "topic", f])
    for i in range(3):
        out = docs_out(SHIM["lc-cache-lookup-docs"] + [f"/org/lib{i}", "topic"])
        assert out.startswith(f"# doc {i}\n".encode()) and len(out) > 60 * 1024
    assert run(SHIM["lc-cache-write"] + ["tier1", "react", "/facebook/react"]).returncode == 0
    assert run(SHIM["lc-cache-lookup"] + ["react"]).stdout == b"/facebook/react\n"
    assert db_rows(store, "PRAGMA integrity_check") == [("ok",)]


def test_topic_matching_ignores_case_and_spacing(store, tmp_path):
    f = tmp_path / "d.md"
    f.write_text("the docs\n")
    run(SHIM["lc-cache-write"] + ["tier2", "/facebook/react", "useEffect Cleanup", f])
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/Facebook/React/", "  useeffect   cleanup "]) \
        == b"the docs\n"


def test_tier2_expires_after_its_ttl(store, tmp_path, monkeypatch):
    f = tmp_path / "d.md"
    f.write_text("short-lived docs\n")
    monkeypatch.setenv("MEMHOOKS_TIER2_TTL_S", "1")
    run(SHIM["lc-cache-write"] + ["tier2", "/a/b", "t", f])
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/a/b", "t"]) == b"short-lived docs\n"
    # Two seconds pass, without waiting for them: the entry is dated two seconds earlier.
    with closing(sqlite3.connect(store)) as conn, conn:
        conn.execute("UPDATE tier2 SET fetched_at = fetched_at - 2, expires_at = expires_at - 2")
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/a/b", "t"]) == b""


def test_projects_first_then_global_knowledge(store, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    env_other = dict(os.environ, CLAUDE_PROJECT_DIR=str(other))
    run(SHIM["lc-cache-write"] + ["tier1", "zod", "/colinhacks/zod"], env=env_other)
    # another project's answer is global knowledge for this one
    assert run(SHIM["lc-cache-lookup"] + ["zod"]).stdout == b"/colinhacks/zod\n"
    # this project's own answer wins over other projects'
    run(SHIM["lc-cache-write"] + ["tier1", "zod", "/zod/zod-fork"])
    assert run(SHIM["lc-cache-lookup"] + ["zod"]).stdout == b"/zod/zod-fork\n"
    assert run(SHIM["lc-cache-lookup"] + ["zod"], env=env_other).stdout == b"/colinhacks/zod\n"


def test_project_key_falls_back_to_the_working_directory(store, tmp_path):
    proj = tmp_path / "cwdproj"
    proj.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    run(SHIM["lc-cache-write"] + ["tier1", "vite", "/vitejs/vite"], env=env, cwd=proj)
    rows = db_rows(store, "SELECT project FROM tier1 WHERE name_key = 'vite'")
    assert rows == [(os.path.realpath(proj),)]


def test_captured_resolve_and_docs_feed_the_cache(store):
    from conftest import load_payload

    assert run_hook("post-tool-use", load_payload("c7_resolve_react")).returncode == 0
    docs = load_payload("c7_query_docs")
    assert run_hook("post-tool-use", docs).returncode == 0
    # no explicit ingest: a miss with pending events ingests before answering
    assert run(SHIM["lc-cache-lookup"] + ["React"]).stdout == b"/facebook/react\n"
    out = docs_out(SHIM["lc-cache-lookup-docs"] + ["/facebook/react", docs["tool_input"]["query"]])
    assert out.decode() == docs["tool_response"][0]["text"]


def _counters(store) -> dict:
    return dict(((t, o), c) for t, o, c in db_rows(store, "SELECT tier, outcome, count FROM counters"))


def _stats_json(store) -> dict:
    proc = run([sys.executable, "-m", "memhooks.cli.main", "stats", "--json"])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_hits_and_misses_are_counted(store, tmp_path):
    body = tmp_path / "hooks.md"
    body.write_text("# useEffect\nCleanup runs before the next effect.\n")
    run(SHIM["lc-cache-write"] + ["tier1", "react", "/facebook/react"])
    run(SHIM["lc-cache-write"] + ["tier2", "/facebook/react", "effects", body])
    run(SHIM["lc-cache-lookup"] + ["react"])
    run(console("lc-cache-lookup") + ["react"])
    run(SHIM["lc-cache-lookup"] + ["vue"])
    run(SHIM["lc-cache-lookup-docs"] + ["/facebook/react", "hooks"])
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/facebook/react", "effects"]) == body.read_bytes()
    # A lookup only reads: its answer waits in the reads log beside the store...
    assert _counters(store) == {}
    lines = (store.parent / "reads.log").read_text().splitlines()
    assert [line.split("\t")[:2] for line in lines] == [
        ["tier1", "hit"], ["tier1", "hit"], ["tier1", "miss"], ["tier2", "miss"], ["tier2", "hit"]]
    # ... and a reader (stats ingests first) folds it into the counters, once.
    stats = _stats_json(store)
    assert _counters(store) == {("tier1", "hit"): 2, ("tier1", "miss"): 1, ("tier2", "miss"): 1,
                                ("tier2", "hit"): 1}
    log = store.parent / "reads.log"
    assert not log.exists() or log.read_bytes() == b""  # taken by the fold (renamed, deleted)
    assert db_rows(store, "SELECT access_count FROM documents") == [(1,)]
    assert json.dumps(stats)  # stats answered while folding
    _stats_json(store)
    assert _counters(store)[("tier1", "hit")] == 2


def test_a_lookup_hit_writes_nothing_to_the_store(store):
    """No write transaction, no journal opened, no checkpoint: the store's bytes stay the same."""
    import hashlib

    run(SHIM["lc-cache-write"] + ["tier1", "react", "/facebook/react"])
    ingest(store)
    files = [store, journal_file(store)]
    before = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    journal_wal = journal_file(store).with_name(journal_file(store).name + "-wal")
    for _ in range(3):
        assert run(SHIM["lc-cache-lookup"] + ["react"]).stdout == b"/facebook/react\n"
    assert [hashlib.sha256(f.read_bytes()).hexdigest() for f in files] == before
    assert not journal_wal.exists() or journal_wal.stat().st_size == 0
    wal = store.with_name(store.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


LOOKER = """
import subprocess, sys
for i in range(int(sys.argv[2])):
    out = subprocess.run(["bash", sys.argv[1], "react" if i % 2 else "nosuch"], capture_output=True, check=True)
    assert out.stdout in (b"/facebook/react\\n", b""), out.stdout
"""


@pytest.mark.slow
def test_concurrent_lookups_and_folds_count_each_answer_once(store):
    """Lookups from six processes while readers fold the log: no answer lost, none twice."""
    from memhooks.ingest.pipeline import fold_reads_log
    from memhooks.store.connect import closing as closing_conn
    from memhooks.store.connect import connect

    run(SHIM["lc-cache-write"] + ["tier1", "react", "/facebook/react"])
    ingest(store)
    procs = [subprocess.Popen([sys.executable, "-c", LOOKER, str(BIN / "lc-cache-lookup"), "20"])
             for _ in range(6)]
    folded = 0
    with closing_conn(connect(str(store))) as conn:
        while any(p.poll() is None for p in procs):
            folded += fold_reads_log(conn, str(store))
        assert all(p.wait(timeout=120) == 0 for p in procs)
        folded += fold_reads_log(conn, str(store))
    assert folded == 120
    assert _counters(store) == {("tier1", "hit"): 60, ("tier1", "miss"): 60}


def test_a_hostile_reads_log_never_blocks_or_poisons_a_lookup(store, tmp_path):
    """A FIFO or a symlink in the log's place, planted and torn lines: the lookup answers, exits
    0 at once, writes through no link, and the fold counts only well-formed lines."""
    run(SHIM["lc-cache-write"] + ["tier1", "react", "/facebook/react"])
    ingest(store)
    log = store.parent / "reads.log"
    os.mkfifo(log)
    assert run(SHIM["lc-cache-lookup"] + ["react"], timeout=20).stdout == b"/facebook/react\n"
    log.unlink()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    log.symlink_to(outside)
    assert run(SHIM["lc-cache-lookup"] + ["react"], timeout=20).stdout == b"/facebook/react\n"
    assert outside.read_text() == "keep\n"
    log.unlink()
    log.write_bytes(b"tier1\thit\tnan\t-\t/p\n"          # not a time
                    b"tier9\thit\t1.0\t-\t/p\n"          # not a kind
                    b"tier1\thit\t1.0\t-\n"               # torn
                    b"\xff\xfe\x00garbage\n"
                    b"tier1\tmiss\t1.0\t-\t/odd%09name%0Ahere%25\n")
    assert run(SHIM["lc-cache-lookup"] + ["react"]).stdout == b"/facebook/react\n"
    ingest(store)
    rows = db_rows(store, "SELECT project, tier, outcome, count FROM counters ORDER BY outcome")
    assert rows == [(os.path.realpath(os.environ["CLAUDE_PROJECT_DIR"]), "tier1", "hit", 1),
                    ("/odd\tname\nhere%", "tier1", "miss", 1)]


WRITER = """
import subprocess, sys
for i in range(int(sys.argv[3])):
    subprocess.run(["bash", sys.argv[1], "tier1", f"lib-{sys.argv[2]}-{i}", f"/org/lib-{sys.argv[2]}-{i}"], check=True)
"""


@pytest.mark.slow
def test_concurrent_writers_do_not_overwrite_each_other(store):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(BIN / "lc-cache-write"), str(w), "15"])
             for w in range(6)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert db_rows(store, "SELECT count(*) FROM tier1")[0][0] == 90
    assert db_rows(store, "SELECT count(*) FROM events WHERE hook_event_name = 'CacheWrite'"
                          " AND state = 'done'")[0][0] == 90


def test_cli_cache_commands_exit_non_zero_on_a_miss(store, tmp_path):
    from memhooks.store.connect import connect

    connect(str(store)).close()  # a miss in an empty store (no store at all: tests/test_no_store.py)
    r = run(["memhooks", "cache", "lookup", "react", "--json"])
    assert r.returncode == 1 and json.loads(r.stdout) == {"name": "react", "hit": False}
    f = tmp_path / "d.md"
    f.write_text("docs body\n")
    assert run(["memhooks", "cache", "write", "tier2", "/facebook/react", "hooks", f]).returncode == 0
    assert run(["memhooks", "cache", "write", "tier1", "react", "/facebook/react"]).returncode == 0
    r = run(["memhooks", "cache", "lookup", "REACT", "--json"])
    assert r.returncode == 0 and json.loads(r.stdout)["library_id"] == "/facebook/react"
    r = run(["memhooks", "cache", "lookup-docs", "/facebook/react", "hooks"])
    assert r.returncode == 0 and unfence(r.stdout.decode()) == "docs body\n"
    r = run(["memhooks", "cache", "lookup-docs", "/facebook/react", "other"])
    assert r.returncode == 1
    r = run(["memhooks", "cache", "write", "tier2", "/a/b", "t", tmp_path / "missing.md"])
    assert r.returncode != 0 and len(r.stderr.decode().strip().splitlines()) == 1


def test_write_survives_reindex(store, tmp_path):
    f = tmp_path / "d.md"
    f.write_text("written docs\n")
    run(SHIM["lc-cache-write"] + ["tier2", "/a/b", "t", f])
    run(SHIM["lc-cache-write"] + ["tier1", "ab", "/a/b"])
    assert run(["memhooks", "reindex"]).returncode == 0
    assert docs_out(SHIM["lc-cache-lookup-docs"] + ["/a/b", "t"]) == b"written docs\n"
    assert run(SHIM["lc-cache-lookup"] + ["ab"]).stdout == b"/a/b\n"


@contextmanager
def _locked_by_another_process(path):
    """`path`'s POSIX record lock held by another process (a stopped lookup or ingester) for
    the length of the block."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import os, time\n"
        f"fd = os.open({str(path)!r}, os.O_RDWR)\n"
        "os.lockf(fd, os.F_LOCK, 0)\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE)
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline() == b"locked\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def test_a_lookup_never_hangs_on_a_fold_that_holds_the_reads_log(store):
    """An ingester stopped in the middle of a fold keeps the reads log locked: the lookup
    still answers and exits at once (that one answer is not counted)."""
    run(SHIM["lc-cache-write"] + ["tier1", "react", "/facebook/react"])
    log = store.parent / "reads.log"
    log.write_bytes(b"")
    with _locked_by_another_process(log):
        r = run(SHIM["lc-cache-lookup"] + ["react"], timeout=20)
        assert (r.returncode, r.stdout) == (0, b"/facebook/react\n")
        assert log.read_bytes() == b""
    assert run(SHIM["lc-cache-lookup"] + ["react"]).stdout == b"/facebook/react\n"
    assert log.read_bytes().count(b"\n") == 1


def test_a_fold_never_hangs_on_a_writer_that_holds_the_reads_log(store):
    """A lookup stopped in the middle of its append keeps the log locked: the ingester's fold
    gives up for now (nothing lost, nothing counted twice) and folds it the next time."""
    from memhooks.ingest.pipeline import fold_reads_log
    from memhooks.store.connect import closing as closing_conn
    from memhooks.store.connect import connect

    run(SHIM["lc-cache-write"] + ["tier1", "react", "/facebook/react"])
    assert run(SHIM["lc-cache-lookup"] + ["react"]).stdout == b"/facebook/react\n"
    log = store.parent / "reads.log"
    with _locked_by_another_process(log):
        with closing_conn(connect(str(store))) as conn:
            assert fold_reads_log(conn, str(store)) == 0
        assert log.read_bytes().count(b"\n") == 1
    with closing_conn(connect(str(store))) as conn:
        assert fold_reads_log(conn, str(store)) == 1
    assert _counters(store) == {("tier1", "hit"): 1}


def test_every_read_is_counted_through_the_reads_log_and_a_terminal_read_is_the_users(store, tmp_path):
    """One way to count a read: lookups, searches and `show` all append to the reads log and
    the fold counts them; lc-cache-lookup-docs run at a terminal is a person's read, not the
    agent's (the agent's Bash tool gives it no terminal)."""
    import pty

    body = tmp_path / "hooks.md"
    body.write_text("# useEffect\nCleanup runs before the next effect.\n")
    run(SHIM["lc-cache-write"] + ["tier2", "/facebook/react", "effects", body])
    run(SHIM["lc-cache-lookup-docs"] + ["/facebook/react", "effects"])  # a pipe: the agent
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([*SHIM["lc-cache-lookup-docs"], "/facebook/react", "effects"],
                              stdout=follower, stderr=subprocess.PIPE, timeout=60)
        assert proc.returncode == 0
        assert b"Cleanup runs" in os.read(leader, 65536)
    finally:
        os.close(follower)
        os.close(leader)
    lines = (store.parent / "reads.log").read_text().splitlines()
    assert [line.split("\t")[0] + ":" + line.split("\t")[4] for line in lines] == ["tier2:agent", "tier2:user"]
    assert _counters(store) == {}  # nothing written by the reads themselves
    run([sys.executable, "-m", "memhooks.cli.main", "search", "useEffect cleanup"])  # the user's own
    lines = (store.parent / "reads.log").read_text().splitlines()
    assert [line.split("\t")[0] + ":" + line.split("\t")[4] for line in lines] == ["doc:user"]
    _stats_json(store)  # folds
    assert _counters(store) == {("tier2", "hit"): 2}
    assert sorted(db_rows(store, "SELECT origin, reads FROM document_reads")) == [("agent", 1), ("user", 2)]
    assert db_rows(store, "SELECT access_count FROM documents") == [(3,)]


def test_a_reads_log_line_of_the_earlier_format_still_counts():
    from memhooks.store.reads import parse

    old = b"tier1\thit\t1700000000.000\t-\t/p\n" + b"tier2\thit\t1700000000.000\tab12\tuser\t/p\n"
    got = parse(old + b"doc\thit\t1\t-\tnobody\t/p\n")  # an unknown reader is skipped
    assert [(r["kind"], r["origin"], r["project"]) for r in got] == [("tier1", "agent", "/p"), ("tier2", "user", "/p")]


@pytest.mark.parametrize("name", ["lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write"])
def test_every_cache_command_answers_help(store, name):
    for argv in (SHIM[name], console(name)):
        proc = run([*argv, "--help"])
        assert proc.returncode == 0
        out = proc.stdout.decode()
        assert out.startswith(f"usage: {name} ") and "empty output is a miss" in out
    assert not store.exists()  # --help touches no store


@pytest.mark.parametrize("topic", ["useEffect cleanup", "useEffect", "cleanup function for useEffect"])
def test_lookup_docs_answers_the_paraphrases_serving_answers(store, topic):
    """With "useEffect cleanup function" captured, the lookup answers what PreToolUse serves for
    the same question (the serving rules: memhooks.recall.coverage), and a question serving
    would not answer is still a miss: nothing printed, exit 0."""
    docs = load_payload("c7_query_docs")
    assert docs["tool_input"]["query"] == "useEffect cleanup function"
    assert run_hook("post-tool-use", docs).returncode == 0
    ingest(store)
    pre = {"session_id": "s", "hook_event_name": "PreToolUse", "cwd": "/tmp", "tool_use_id": "t",
           "tool_name": "mcp__context7__query-docs",
           "tool_input": {"libraryId": "/facebook/react", "query": topic}}
    served = run_hook("pre-tool-use", pre)
    assert served.returncode == 0 and served.stdout.strip(), "serving answers this paraphrase"
    r = run(SHIM["lc-cache-lookup-docs"] + ["/facebook/react", topic])
    assert r.returncode == 0 and r.stderr == b""
    body = unfence(r.stdout.decode())
    assert "Return a cleanup function" in body or "cleanup" in body
    reason = json.loads(served.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert body.strip() in reason  # the same snippets serving gave
    miss = run(SHIM["lc-cache-lookup-docs"] + ["/facebook/react", "server components streaming"])
    assert (miss.returncode, miss.stdout) == (0, b"")
    r = run(["memhooks", "cache", "lookup-docs", "/facebook/react", topic])
    assert r.returncode == 0 and unfence(r.stdout.decode() + "\n").strip() == body.strip()


def test_lookup_answers_only_within_the_tier1_ttl(store):
    """An ID from the table of known libraries (which never expires) is no fresh hit once the
    tier1 TTL has passed since the library was last seen: empty output, exit 0."""
    assert run_hook("post-tool-use", load_payload("c7_resolve_react")).returncode == 0
    ingest(store)
    assert run(SHIM["lc-cache-lookup"] + ["react"]).stdout == b"/facebook/react\n"
    day_ago = 2 * 86400
    with closing(sqlite3.connect(store)) as c:  # as the store is two days later
        c.execute("UPDATE tier1 SET resolved_at = resolved_at - ?, expires_at = expires_at - ?",
                  (day_ago, day_ago))
        c.execute("UPDATE libraries SET last_seen = last_seen - ?", (day_ago,))
        c.commit()
    r = run(SHIM["lc-cache-lookup"] + ["react"])
    assert (r.returncode, r.stdout) == (0, b"")
