"""Trustworthy capture: per-event isolation, the journal apart from the projections, a damaged
store healed, a fallback spool, anchored matchers, private paths, regular files only."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import (
    BIN,
    HOOKS,
    ROOT,
    db_rows,
    ingest,
    journal_file,
    load_payload,
    run,
    run_hook,
)

CLI = [sys.executable, "-m", "memhooks.cli.main"]


def _journal(store, payloads):
    """Journal raw payloads (str or bytes) the way the hook does, in one transaction."""
    from memhooks.capture.payload import prepare
    from memhooks.store.connect import connect_journal
    from memhooks.store.journal import append

    conn = connect_journal(str(store))
    try:
        conn.execute("BEGIN IMMEDIATE")
        for p in payloads:
            raw = p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p
            text, error = prepare(raw, len(raw))
            append(conn, text, size=len(raw), project=None, error=error,
                   hook_event_name="PostToolUse")
        conn.execute("COMMIT")
    finally:
        conn.close()


def _valid_c7(marker: str = "") -> str:
    payload = load_payload("c7_query_docs")
    if marker:
        payload["tool_response"][0]["text"] += f"\n\nvariant {marker}\n"
    return json.dumps(payload)


# ------------------------------------------------------------------ 1. per-event isolation

@pytest.mark.parametrize("field", ["session_id", "tool_name", "tool_use_id", "cwd",
                                   "hook_event_name"])
def test_lone_surrogate_in_a_column_never_blocks_the_rest(store, field):
    bad = load_payload("c7_query_docs")
    bad[field] = bad.get(field, "x") + "\ud800"
    bad["tool_response"][0]["text"] += "\n\nbad variant\n"
    _journal(store, [json.dumps(bad), _valid_c7("after"), json.dumps(dict(bad, cwd="\x00\udfff"))])
    ingest(store)
    states = [r[0] for r in db_rows(store, "SELECT state FROM events ORDER BY id")]
    assert "pending" not in states
    assert states[1] == "done"
    assert db_rows(store, "SELECT count(*) FROM documents WHERE document_text(body) LIKE '%variant after%'"
                   )[0][0] == 1


def test_a_failing_batch_falls_back_to_one_event_per_transaction(store):
    """An event whose write fails (here a trigger refuses it) is failed alone; the other
    events of its batch are projected."""
    _journal(store, [_valid_c7(str(i)) for i in range(5)])
    conn = sqlite3.connect(str(journal_file(store)))
    conn.execute("CREATE TRIGGER refuse_third BEFORE UPDATE OF state ON events"
                 " WHEN NEW.id = 3 AND NEW.state = 'done'"
                 " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
    conn.commit()
    conn.close()
    ingest(store)
    rows = dict(db_rows(store, "SELECT id, state FROM events"))
    assert rows == {1: "done", 2: "done", 3: "failed", 4: "done", 5: "done"}
    err = db_rows(store, "SELECT error FROM events WHERE id = 3")[0][0]
    assert "refused by the test" in err
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 4


def test_non_utf8_project_dir_is_journaled_and_drained(store, tmp_path):
    """A project folder whose name is not UTF-8 (`/tmp/caf\\xe9`), from the hook and from a
    spool file, journals and ingests; other projects are not blocked."""
    proj = os.path.join(os.fsencode(str(tmp_path)), b"caf\xe9")
    os.mkdir(proj)
    env = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    env[b"CLAUDE_PROJECT_DIR"] = proj
    env[b"MEMHOOKS_NO_SPAWN"] = b"1"
    r = subprocess.run([str(HOOKS / "post-tool-use")], input=_valid_c7("cafe").encode(),
                       env=env, capture_output=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    from memhooks.store.journal import spool

    assert spool(str(store), _valid_c7("spooled"), size=10, project=os.fsdecode(proj),
                 error=None, hook_event_name="PostToolUse")
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM events WHERE state = 'done'")[0][0] == 2
    projects = {r[0] for r in db_rows(store, "SELECT project FROM documents")}
    assert projects == {os.fsdecode(proj).encode("utf-8", "surrogateescape").decode(
        "utf-8", "backslashreplace")}
    assert not list((store.parent / "spool").glob("*.json"))


def test_unjournalable_spool_files_move_to_failed(store):
    folder = store.parent / "spool"
    folder.mkdir(parents=True)
    (folder / "00000000000000000001-1.json").write_bytes(b"{not json")
    (folder / "00000000000000000002-1.json").write_text(json.dumps({"payload": 5}))
    (folder / "00000000000000000003-1.json").write_text(json.dumps(
        {"payload": _valid_c7("good"), "project": "/p\udce9", "size": 3,
         "hook_event_name": "PostToolUse\ud800"}))
    ingest(store)
    ingest(store)  # a second pass retries nothing
    assert sorted(p.name for p in (folder / "failed").iterdir()) == [
        "00000000000000000001-1.json", "00000000000000000002-1.json"]
    assert not list(folder.glob("*.json"))
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1
    log = (store.parent / "memhooks.log").read_text()
    assert log.count("cannot be journaled, moved to") == 2


# ------------------------------------------------------------------ 5. journal apart, healing

def _old_layout_store(db):
    """A store as the single-file layout made it: migrations m001..m005, events in main."""
    from memhooks.store.migrations import MIGRATIONS

    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    conn.execute("CREATE TABLE _memhooks_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    import sqlite_utils

    db_ = sqlite_utils.Database(conn, execute_plugins=False)
    for fn in MIGRATIONS[:5]:
        fn(db_)
        conn.execute("INSERT INTO _memhooks_migrations VALUES (?, ?)", (fn.__name__, time.time()))
    # m001 made `events` in this file then; its one definition is the journal's j001 now
    from memhooks.store.journal_migrations import JOURNAL_MIGRATIONS

    JOURNAL_MIGRATIONS[0](conn, "main")  # j001_events
    conn.execute("PRAGMA user_version = 5")
    for i, state in enumerate(["done", "failed", "pending", "pending"], start=1):
        conn.execute("INSERT INTO events (id, received_at, hook_event_name, payload, bytes, state,"
                     " error) VALUES (?, ?, 'PostToolUse', ?, 1, ?, ?)",
                     (i * 10, 1000.0 + i, _valid_c7(f"old{i}"), state,
                      "kept reason" if state == "failed" else None))
    conn.execute("COMMIT")
    conn.close()


def test_an_old_single_file_store_migrates_losing_nothing(store):
    _old_layout_store(store)
    # A hook of the new layout journaled before any ingest ran.
    r = run_hook("post-tool-use", _valid_c7("new"), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
    assert r.returncode == 0
    ingest(store)
    plain = sqlite3.connect(str(store))
    assert plain.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events'").fetchone()[0] == 0
    plain.close()
    rows = db_rows(journal_file(store), "SELECT id, state, error, received_at FROM events ORDER BY id")
    assert [r[0] for r in rows[:4]] == [10, 20, 30, 40]
    assert rows[0][1] == "done" and rows[1][1:3] == ("failed", "kept reason")
    assert [r[1] for r in rows[2:]] == ["done", "done", "done"]
    assert rows[4][0] > 40  # the new layout's event renumbered after the old ones
    docs = {r[0] for r in db_rows(store, "SELECT document_text(body) FROM documents")}
    assert any("variant new" in d for d in docs) and any("variant old3" in d for d in docs)


def _damage(db, how):
    data = bytearray(db.read_bytes())
    if how == "truncated":
        db.write_bytes(bytes(data[: len(data) // 2 + 100]))
    elif how == "garbage-header":
        db.write_bytes(b"garbage" * 20 + bytes(data[140:]))
    elif how == "corrupted-pages":
        page = 4096
        for off in range(page * 2, len(data), page):
            data[off:off + 64] = os.urandom(64)
        db.write_bytes(bytes(data))


def _filled_store(store, n=30):
    _journal(store, [_valid_c7(str(i)) for i in range(n)])
    ingest(store)
    conn = sqlite3.connect(str(store))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == n


@pytest.mark.parametrize("how", ["truncated", "garbage-header", "corrupted-pages"])
def test_a_damaged_store_heals_and_readers_print_one_line(store, how):
    _filled_store(store)
    _damage(store, how)
    outs = []
    for argv in (["stats"], ["search", "variant"], ["stats"]):
        r = run([*CLI, *argv], timeout=120)
        outs.append(r)
        assert "Traceback" not in r.stderr.decode(), r.stderr.decode()
        assert len(r.stderr.decode().strip().splitlines()) <= 1
    # the store is back, rebuilt from the journal: every document is there
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 30
    assert list(store.parent.glob("memhooks.db.corrupt-*"))
    assert outs[-1].returncode == 0
    doctor = run([*CLI, "doctor"], env=dict(os.environ, MEMHOOKS_OFFLINE="1"), timeout=120)
    line = next(ln for ln in doctor.stdout.decode().splitlines() if " healing " in ln)
    assert "damaged store moved aside to" in line and "rebuilt from 30 journaled events" in line


def test_lc_cache_and_mcp_tools_survive_a_damaged_store(store):
    _filled_store(store, 3)
    _damage(store, "garbage-header")
    r = run([BIN / "lc-cache-lookup", "react"], timeout=60)
    assert r.returncode == 0 and r.stdout == b""
    assert b"Traceback" not in r.stderr and len(r.stderr.splitlines()) <= 1
    from memhooks.entry.mcp import tool_search

    text, _ = tool_search("variant")  # the lookup above healed the store: answers again
    assert "Traceback" not in text and "variant" in text
    _damage(store, "garbage-header")
    for fn in ("tool_search", "tool_get", "tool_lookup"):
        from memhooks.entry import mcp as mcp_server

        text, _ = getattr(mcp_server, fn)("1" if fn == "tool_get" else "react")
        assert "Traceback" not in text


def test_a_damaged_journal_is_moved_aside_and_capture_goes_on(store):
    _filled_store(store, 3)
    jf = journal_file(store)
    conn = sqlite3.connect(str(jf))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    jf.write_bytes(b"\x00garbage" * 500)
    r = run_hook("post-tool-use", _valid_c7("after-damage"),
                 env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert list(store.parent.glob("journal.db.corrupt-*"))
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents WHERE document_text(body) LIKE '%after-damage%'"
                   )[0][0] == 1
    # new ids start past the old ones: a new event never takes an old capture's id
    new_id = db_rows(store, "SELECT max(id) FROM events")[0][0]
    assert new_id > 1_000_000_000_000


def test_periodic_quick_check_runs_at_most_once_an_interval(store):
    from memhooks.store import health

    _journal(store, [_valid_c7()])
    assert health.due(str(store), interval=3600)
    assert not health.due(str(store), interval=3600)


# ------------------------------------------------------------------ 6. fallback spool

def test_plugin_data_naming_a_file_spools_to_the_state_dir_then_drains(tmp_path, store,
                                                                       monkeypatch):
    blocker = tmp_path / "plugin-data"
    blocker.write_text("not a folder")
    monkeypatch.delenv("MEMHOOKS_DB")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(blocker))
    state = tmp_path / "state"
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    r = run_hook("post-tool-use", _valid_c7("fallback"), env=env)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    spooled = list((state / "memhooks" / "spool").glob("*.json"))
    assert len(spooled) == 1
    assert stat.S_IMODE(os.stat(state / "memhooks").st_mode) == 0o700
    assert "journal failed" in (state / "memhooks" / "memhooks.log").read_text()
    blocker.unlink()
    blocker.mkdir()
    ingest(blocker / "memhooks.db")
    assert db_rows(blocker / "memhooks.db", "SELECT count(*) FROM documents")[0][0] == 1
    assert not list((state / "memhooks" / "spool").glob("*.json"))


def test_read_only_store_folder_spools_to_the_fallback(store):
    store.parent.mkdir(parents=True, exist_ok=True)
    if shutil.which("chattr") is None or run(["chattr", "+i", store.parent]).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        r = run_hook("post-tool-use", _valid_c7("ro"), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    finally:
        run(["chattr", "-i", store.parent])
    state = store.parent.parent / "state" / "memhooks"
    assert len(list((state / "spool").glob("*.json"))) == 1
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1


def test_temp_dir_fallback_when_the_state_dir_is_unusable(store, tmp_path):
    from memhooks.store.journal import spool

    (tmp_path / "state-file").write_text("x")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env_db = str(tmp_path / "blocker" / "memhooks.db")
    (tmp_path / "blocker").write_text("x")
    code = (
        "import sys; from memhooks.store.journal import spool; "
        f"print(spool({env_db!r}, '{{}}', size=2, project=None, error=None,"
        " hook_event_name='PostToolUse'))"
    )
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state-file"), TMPDIR=str(tmp))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    where = r.stdout.strip()
    assert where.startswith(str(tmp / f"memhooks-{os.geteuid()}" / "spool")), r.stderr
    assert stat.S_IMODE(os.stat(tmp / f"memhooks-{os.geteuid()}").st_mode) == 0o700
    del spool


# ------------------------------------------------------------------ 7. matchers

NAMES = [
    "mcp__context7__resolve-library-id", "mcp__context7__query-docs",
    "mcp__context7__get-library-docs", "mcp__Context7__query-docs",
    "mcp__upstash-context7__query-docs", "mcp__context7-mcp__query-docs",
    "mcp__plugin_context7_context7__query-docs", "mcp__plugin_context7_context7__resolve-library-id",
    "mcp__exa__web_search_exa", "mcp__exa__get_code_context_exa", "mcp__exa__crawling_exa",
    "mcp__plugin_exa_exa__web_search_exa", "mcp__exa-mcp__web_fetch_exa", "mcp__my_exa__anything",
    "mcp__docs__query-docs", "WebFetch", "WebSearch",
    # not captured
    "mcp__example-server__fetch", "mcp__hexagon__search", "mcp__texas_db__query",
    "mcp__examples__get", "mcp__context70__x", "mcp__mycontext7x__x", "mcp__exam__x",
    "mcp__plugin_hexagon_hexagon__x", "mcp__texas__x", "Bash", "Bashful", "Read", "WebFetcher",
    "xmcp__context7__query-docs", "mcp__context7", "mcp__context7__", "mcp____x",
    "mcp__exa__", "mcp__a__b_exa_c", "mcp__memhooks__search_documents",
    "mcp__plugin_memhooks_memhooks__search_documents", "mcp__flexa__x",
]
MUST_NOT = {"mcp__example-server__fetch", "mcp__hexagon__search", "mcp__texas_db__query",
            "mcp__plugin_memhooks_memhooks__search_documents", "Bashful"}


def _node_matches(pattern: str, names: list[str]) -> list[bool]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    script = ("const [p, n] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "const re = new RegExp(p);"
              "process.stdout.write(JSON.stringify(n.map(x => re.test(x))));")
    r = subprocess.run(["node", "-e", script], input=json.dumps([pattern, names]),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_tool_matcher_in_javascript_agrees_with_the_routing():
    from memhooks.tools import BY_COMMAND, TOOL_MATCHER, is_captured

    got = dict(zip(NAMES, _node_matches(TOOL_MATCHER, NAMES), strict=True))
    for name in NAMES:
        assert got[name] == (is_captured(name) or name in BY_COMMAND), name
    assert not any(got[n] for n in MUST_NOT)
    assert all(got[n] for n in ("mcp__context7__query-docs", "mcp__plugin_exa_exa__web_search_exa",
                                "mcp__upstash-context7__query-docs", "WebSearch"))


def test_serve_matcher_in_javascript_only_names_whole_servers():
    from memhooks.tools import SERVE_MATCHER

    got = dict(zip(NAMES, _node_matches(SERVE_MATCHER, NAMES), strict=True))
    assert got["mcp__context7__query-docs"] and got["mcp__plugin_context7_context7__query-docs"]
    assert got["mcp__exa__crawling_exa"] and got["WebFetch"]
    assert not any(v for k, v in got.items() if "hexagon" in k or "example" in k or "texas" in k)


def test_hooks_json_and_install_share_the_matchers(tmp_path):
    from memhooks import tools
    from memhooks.setup import install

    hooks = json.loads((ROOT / "hooks.json").read_text())["hooks"]
    assert hooks["PostToolUse"][0]["matcher"] == tools.TOOL_MATCHER
    assert hooks["PostToolUseFailure"][0]["matcher"] == tools.TOOL_MATCHER
    assert hooks["PreToolUse"][0]["matcher"] == tools.SERVE_MATCHER
    assert install.TOOL_MATCHER is tools.TOOL_MATCHER
    assert install.SERVE_MATCHER is tools.SERVE_MATCHER


def test_an_uncaptured_tool_is_journaled_as_metadata_only(store):
    secret = "hunter2-very-private-text"
    payload = {"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "mcp__hexagon__read",
               "tool_input": {"path": "/etc/" + secret},
               "tool_response": [{"type": "text", "text": secret * 10}], "tool_use_id": "t"}
    r = run_hook("post-tool-use", payload, env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
    assert r.returncode == 0
    row = db_rows(journal_file(store), "SELECT payload, state, bytes FROM events")[0]
    meta = json.loads(row[0])
    assert row[1] == "skipped" and secret not in row[0]
    assert meta["tool_name"] == "mcp__hexagon__read" and meta["bytes"] == row[2]
    assert len(meta["sha256"]) == 64
    for suffix in ("", "-wal"):
        p = str(journal_file(store)) + suffix
        if os.path.exists(p):
            assert secret.encode() not in open(p, "rb").read()
    ingest(store)
    assert db_rows(store, "SELECT state FROM events") == [("skipped",)]


def test_the_byte_scan_finds_the_top_level_tool_name():
    from memhooks.capture.tool_calls import tool_name_of

    assert tool_name_of(b'{"tool_name": "WebFetch", "x": "\\"tool_name\\": \\"Bash\\""}') == "WebFetch"
    nested = b'{"tool_input": {"tool_name": "WebFetch"}, "tool_name": "Bash"}'
    assert tool_name_of(nested) == "Bash"
    assert tool_name_of(b'{"tool_name": "mcp__\\u0065xa__x"}') == "mcp__exa__x"
    assert tool_name_of(b"not json") is None


# ------------------------------------------------------------------ 8. paths

def _db_of(env: dict) -> str:
    code = "from memhooks.config import db_path; print(db_path())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_configured_paths_expand_tilde_and_refuse_relative_ones(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMHOOKS_", "CLAUDE_"))}
    base.update(HOME=str(home), XDG_DATA_HOME=str(tmp_path / "xdg"))
    assert _db_of(dict(base, MEMHOOKS_DB="~/s/memhooks.db")) == str(home / "s" / "memhooks.db")
    assert _db_of(dict(base, CLAUDE_PLUGIN_DATA="~/.claude/pd")) == str(
        home / ".claude" / "pd" / "memhooks.db")
    default = str(tmp_path / "xdg" / "memhooks" / "memhooks.db")
    for name, value in (("MEMHOOKS_DB", "rel/memhooks.db"), ("CLAUDE_PLUGIN_DATA", "./pd")):
        assert _db_of(dict(base, **{name: value})) == default
        log = (tmp_path / "xdg" / "memhooks" / "memhooks.log").read_text()
        assert f"{name}=" in log and "not an absolute path" in log


def test_parents_are_created_0700_whatever_the_umask(tmp_path):
    db = tmp_path / "a" / "b" / "c" / "memhooks.db"
    code = ("import os; os.umask(0); from memhooks.store.connect import connect_journal, connect;"
            f" connect_journal({str(db)!r}).close(); connect({str(db)!r}).close()")
    subprocess.run([sys.executable, "-c", code], check=True)
    for folder in (tmp_path / "a", tmp_path / "a" / "b", db.parent):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
    for f in (db, journal_file(db)):
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600


def test_an_existing_loose_store_is_tightened(store):
    _journal(store, [_valid_c7()])
    ingest(store)
    os.chmod(store, 0o644)
    os.chmod(journal_file(store), 0o664)
    os.chmod(store.parent, 0o755)
    ingest(store)
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(journal_file(store)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.parent).st_mode) == 0o700


def test_lc_cache_write_reads_only_regular_files(store, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for source in (fifo, "/dev/zero", tmp_path):
        r = run([BIN / "lc-cache-write", "tier2", "/org/lib", "topic", source], timeout=20)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    body = tmp_path / "body.md"
    body.write_text("### Heading\n\nA real body of documentation text, long enough.\n")
    r = run([BIN / "lc-cache-write", "tier2", "/org/lib", "topic", body], timeout=20)
    assert r.returncode == 0
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 1


# ------------------------------------------------------------------ proof: hostile events

json_leaf = (st.none() | st.booleans() | st.integers() | st.floats()
             | st.text(alphabet=st.characters(codec=None, categories=None), max_size=40))
def _containers(children):
    return st.one_of(st.lists(children, max_size=4),
                     st.dictionaries(st.text(max_size=8), children, max_size=4))


json_any = st.recursive(json_leaf, _containers, max_leaves=25)
hostile_text = st.text(alphabet=st.sampled_from(["\ud800", "\udfff", "\x00", "a", "\u2028", "é",
                                                 "\\", '"', "\U0001F600"]), max_size=30)
FIELDS = ["session_id", "tool_name", "tool_use_id", "cwd", "hook_event_name"]


@st.composite
def hostile_payloads(draw):
    kind = draw(st.sampled_from(["field"] * 4 + ["types", "nested", "invalid", "bytes"] * 2
                                + ["huge"]))
    if kind == "field":
        event = json.loads(_valid_c7())
        for field in draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=5)):
            event[field] = draw(hostile_text | json_any)
        event["tool_response"] = draw(json_any | st.just(event["tool_response"]))
        return json.dumps(event, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    if kind == "types":
        return json.dumps({f: draw(json_any) for f in FIELDS + ["tool_input", "tool_response"]}
                          ).encode()
    if kind == "nested":
        depth = draw(st.integers(100, 5000))
        return (b'{"hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_response": '
                + b"[" * depth + b"]" * depth + b"}")
    if kind == "invalid":
        return draw(st.sampled_from([b"{", b"[]", b"null", b'"x"', b'{"a": NaN}', b"{\"a\": 1,}",
                                     b'{"tool_name": "\\ud800"', b"\xef\xbb\xbf{}"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    size = draw(st.integers(100_000, 300_000))
    event = json.loads(_valid_c7())
    event["tool_response"][0]["text"] = "### H\n\n" + "x" * size
    event["tool_input"]["query"] = "\ud800" * 50
    return json.dumps(event).encode()


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("hostile") / "memhooks.db"
    yield db
    # thousands of hostile events went through this journal; nothing is left pending
    assert db_rows(db, "SELECT count(*) FROM events")[0][0] >= 2000
    assert db_rows(db, "SELECT count(*) FROM events WHERE state = 'pending'")[0][0] == 0
    assert db_rows(db, "PRAGMA integrity_check") == [("ok",)]
    assert db_rows(journal_file(db), "PRAGMA integrity_check") == [("ok",)]


_SEEN = {"n": 0}


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=st.lists(hostile_payloads(), min_size=15, max_size=30))
def test_thousands_of_hostile_events_never_stop_a_valid_one(batch, hostile_db):
    """Each example journals a batch of hostile events, then one valid Context7 event, and
    runs one ingest: the valid one is a document. All examples share one store, so the
    journal holds thousands of hostile events by the end."""
    from memhooks.ingest.pipeline import ingest_pending
    from memhooks.store.connect import connect

    _SEEN["n"] += 1
    marker = f"the valid one {_SEEN['n']}"
    _journal(hostile_db, batch + [_valid_c7(marker).encode()])
    conn = connect(str(hostile_db))
    try:
        ingest_pending(conn, str(hostile_db))
    finally:
        conn.close()
    assert db_rows(hostile_db, "SELECT count(*) FROM events WHERE state = 'pending'")[0][0] == 0
    assert db_rows(hostile_db, "SELECT count(*) FROM documents WHERE document_text(body) LIKE ?",
                   (f"%variant {marker}\n%",))[0][0] == 1


def test_many_readers_at_once_on_a_damaged_store(store):
    """Several processes meet the damage together: one moves the file aside, the others
    open the fresh store; none prints a traceback, and the store is whole afterwards."""
    _filled_store(store, 20)
    _damage(store, "garbage-header")
    procs = [subprocess.Popen([*CLI, "stats", "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert b"Traceback" not in err, err
        assert len(err.strip().splitlines()) <= 1
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 20
    assert len(list(store.parent.glob("memhooks.db.corrupt-*"))) == 1


def test_the_ingester_strips_an_uncaptured_tool_journaled_whole(store):
    """An event journaled whole by an older hook (or a replayed file) for a tool memhooks
    does not capture keeps only its metadata after ingestion."""
    secret = "private-bash-output-text"
    event = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "session_id": "s",
             "tool_input": {"command": "cat notes"}, "tool_response": {"stdout": secret}}
    from memhooks.store.connect import connect_journal
    from memhooks.store.journal import append

    conn = connect_journal(str(store))
    append(conn, json.dumps(event), size=10, project=None, hook_event_name="PostToolUse")
    conn.close()
    ingest(store)
    payload, state = db_rows(store, "SELECT payload, state FROM events")[0]
    assert state == "skipped" and secret not in payload
    assert json.loads(payload)["tool_name"] == "Bash"
    conn = sqlite3.connect(str(journal_file(store)))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for suffix in ("", "-wal"):
        p = str(journal_file(store)) + suffix
        if os.path.exists(p):
            assert secret.encode() not in open(p, "rb").read()


def test_readable_rows_of_a_damaged_journal_are_salvaged_by_the_ingester(store):
    """Pages of the journal are damaged past its first ones: capture goes on in a fresh
    journal, and the ingester copies back every row it can still read."""
    _journal(store, [_valid_c7(str(i)) for i in range(40)])
    ingest(store)
    jf = journal_file(store)
    conn = sqlite3.connect(str(jf))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(jf.read_bytes())
    page = int.from_bytes(data[16:18], "big")  # the journal's page size (16 KiB since compaction)
    data[len(data) - page:len(data) - page + 200] = os.urandom(200)  # one page near the end
    jf.write_bytes(bytes(data))
    from memhooks.store import health

    assert health.heal_journal(str(store), "test")
    r = subprocess.run([sys.executable, str(ROOT / "src" / "memhooks" / "_entry.py"), "ingest"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0
    ids = [row[0] for row in db_rows(jf, "SELECT id FROM events WHERE hook_event_name ="
                                     " 'PostToolUse'")]
    assert 0 < len(ids) <= 40 and ids[0] == 1
    kinds = [i["kind"] for i in health.incidents(str(store))]
    assert kinds.count("salvage") == 1
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 40  # projections kept


def test_tool_matcher_and_routing_agree_on_thousands_of_generated_names():
    """Names built from the pieces that matter (server words, plugin forms, separators, case,
    tool names), checked in Node's regex engine against the Python predicate."""
    import random

    from memhooks.tools import TOOL_MATCHER, is_captured

    rng = random.Random(8)
    words = ["context7", "Context7", "CONTEXT7", "exa", "Exa", "upstash", "mcp", "example",
             "hexagon", "texas", "db", "server", "plugin", "docs", "context", "7", "ex", "a",
             "flexa", "exam", "context70", ""]
    seps = ["-", "_", "__", "--", ""]
    tools = ["query-docs", "resolve-library-id", "get-library-docs", "web_search_exa",
             "crawling_exa", "search", "fetch", "read_file", "x_exa", "_exa", "exa", "", "a.b"]
    drawn: set[str] = set()
    while len(drawn) < 3000:
        server = rng.choice(words)
        for _ in range(rng.randint(0, 3)):
            server += rng.choice(seps) + rng.choice(words)
        if rng.random() < 0.3:
            plugin = rng.choice(["context7", "exa", "memhooks", "hexagon", "my-plugin"])
            server = f"plugin_{plugin}_{server}"
        drawn.add(f"{rng.choice(['mcp__', 'mcp__', 'mcp_', ''])}{server}__{rng.choice(tools)}")
    names = sorted(drawn)
    got = _node_matches(TOOL_MATCHER, names)
    differ = [(n, g) for n, g in zip(names, got, strict=True) if g != is_captured(n)]
    # The one known difference: a plugin whose own name has the word context7/exa bundling a
    # server without it is let through by the matcher and journaled as metadata only.
    differ = [(n, g) for n, g in differ
              if not (g and n.startswith(("mcp__plugin_context7_", "mcp__plugin_exa_")))]
    assert differ == []


def test_a_journal_with_damaged_pages_heals_at_the_insert(store):
    """The header is fine, the pages are not: the hook's insert meets the damage, moves
    the journal aside and journals into a fresh one (no spool, nothing lost)."""
    _journal(store, [_valid_c7(str(i)) for i in range(40)])
    jf = journal_file(store)
    conn = sqlite3.connect(str(jf))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(jf.read_bytes())
    for off in range(4096, len(data), 4096):
        data[off:off + 100] = os.urandom(100)
    jf.write_bytes(bytes(data))
    r = run_hook("post-tool-use", _valid_c7("fresh"), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1"))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    spooled = list((store.parent / "spool").glob("*.json"))
    aside = list(store.parent.glob("journal.db.corrupt-*"))
    assert aside or spooled  # healed at once, or (damage not met by the insert) spooled
    ingest(store)
    assert db_rows(store, "SELECT count(*) FROM documents WHERE document_text(body) LIKE '%variant fresh%'"
                   )[0][0] == 1


def test_drainers_running_at_once_journal_each_spooled_event_once(store):
    """Readers and the detached ingester may drain the spool at the same time: each spooled
    event is claimed by one of them and journaled once."""
    import threading

    from memhooks.store.connect import connect_journal
    from memhooks.store.journal import drain_spool, spool

    store.parent.mkdir(parents=True, exist_ok=True)
    for i in range(60):
        assert spool(str(store), json.dumps({"hook_event_name": "PostToolUse", "n": i}), size=10,
                     project=None, error=None, hook_event_name="PostToolUse")
    barrier = threading.Barrier(4)
    moved: list[int] = []

    def drain():
        conn = connect_journal(str(store))
        try:
            barrier.wait()
            moved.append(drain_spool(conn, str(store)))
        finally:
            conn.close()

    threads = [threading.Thread(target=drain) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sum(moved) == 60
    payloads = [json.loads(p)["n"] for (p,) in db_rows(store, "SELECT payload FROM events")]
    assert sorted(payloads) == list(range(60))
    assert not [n for n in os.listdir(store.parent / "spool") if n.endswith(".json")]
