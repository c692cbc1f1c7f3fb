"""Fuzzing the hook with hypothesis, and concurrent captures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HOOKS, db_rows, ingest, journal_file, load_payload, wait_idle

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)

TOOLS = ["mcp__context7__query-docs", "mcp__plugin_context7_context7__resolve-library-id",
         "mcp__exa__web_search_exa", "mcp__plugin_exa_exa__web_fetch_exa", "WebFetch", "WebSearch",
         "mcp__context7__get-library-docs", "Bash"]

payloads = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=500).map(lambda s: s.encode("utf-8", "surrogatepass")),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({
        "hook_event_name": st.sampled_from(["PostToolUse", "PostToolUseFailure", "SessionStart"]) | json_values,
        "tool_name": st.sampled_from(TOOLS) | json_values,
        "tool_input": json_values,
        "tool_response": json_values | st.lists(
            st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=300)}), max_size=3),
        "session_id": json_values,
        "cwd": json_values,
    }).map(lambda d: json.dumps(d).encode()),
)


@pytest.fixture(scope="module")
def fuzz_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("fuzz") / "memhooks.db"
    yield db
    assert db_rows(journal_file(db), "PRAGMA integrity_check") == [("ok",)]


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=payloads)
def test_fuzz_hook_always_exits_zero(data, fuzz_db):
    db = str(fuzz_db)
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1", MEMHOOKS_DB=db)
    r = subprocess.run([str(HOOKS / "post-tool-use")], input=data, capture_output=True, env=env,
                       timeout=30)
    assert r.returncode == 0
    assert r.stderr == b""
    out = r.stdout.strip()
    assert out == b"" or isinstance(json.loads(out), dict)
    assert os.path.exists(journal_file(db))  # the hook writes the journal only


def test_fuzzed_store_ingests_and_stays_intact(store):
    # Feed a spread of malformed events through the hook, then ingest them all.
    samples = [b"", b"{", b"[]", b"\x00\xff", json.dumps({"tool_response": [1, {"text": 2}]}).encode(),
               json.dumps({"hook_event_name": "PostToolUse", "tool_name": "WebSearch",
                           "tool_response": {"results": [None, 5, "short", {"content": "x"}]}}).encode()]
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    for s in samples:
        assert subprocess.run([str(HOOKS / "post-tool-use")], input=s, env=env,
                              capture_output=True).returncode == 0
    ingest(store)
    assert db_rows(store, "PRAGMA integrity_check") == [("ok",)]
    assert db_rows(store, "SELECT count(*) FROM events")[0][0] == len(samples)
    assert db_rows(store, "SELECT count(*) FROM events WHERE state = 'pending'")[0][0] == 0


WORKER = textwrap.dedent("""
    import json, subprocess, sys
    hook, base, worker, n = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for i in range(n):
        p = json.loads(json.dumps(base))
        p["tool_use_id"] = f"toolu_{worker}_{i}"
        # 5 distinct texts per worker -> 40 distinct documents in all
        p["tool_response"][0]["text"] += f"\\n\\nvariant {worker}-{i % 5}\\n"
        r = subprocess.run([hook], input=json.dumps(p).encode(), capture_output=True)
        if r.returncode != 0 or r.stdout or r.stderr:
            print("BAD", r.returncode, r.stdout, r.stderr)
            sys.exit(1)
""")


@pytest.mark.slow
def test_concurrent_captures_lose_nothing(store):
    base = load_payload("c7_query_docs")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(HOOKS / "post-tool-use"),
                               json.dumps(base), str(w), "50"]) for w in range(8)]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    wait_idle(store, timeout=60)
    ingest(store)
    # settled events may already sit in the journal's compressed packs: count those too
    from memhooks.store.connect import closing, connect
    from memhooks.store.packs import packed_states

    with closing(connect(str(store))) as conn:
        live = dict(conn.execute("SELECT state, count(*) FROM events GROUP BY state").fetchall())
        packed = packed_states(conn)
    assert sum(live.values()) + sum(packed.values()) == 400
    assert live.get("done", 0) + packed.get("done", 0) == 400
    assert db_rows(store, "SELECT count(*) FROM documents")[0][0] == 40
    assert db_rows(store, "SELECT count(*) FROM captures")[0][0] == 400
    assert db_rows(store, "PRAGMA integrity_check") == [("ok",)]
    log = store.parent / "memhooks.log"
    text = log.read_text() if log.exists() else ""
    assert "locked" not in text
    assert not (store.parent / "spool").exists() or not list((store.parent / "spool").iterdir())


DEEP = b'{"tool_name": "mcp__context7__query-docs", "tool_input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
HUGE = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
                   "tool_input": {"libraryId": "/facebook/react", "query": "x" * (40 << 20)}}).encode()
BAD_BYTES = (b'{"hook_event_name": "PostToolUse", "tool_name": "WebFetch", '
             b'"tool_input": {"url": "https://example.invalid/\xff\xfe\x80", "prompt": "p"}}')
CAUSES = {"deep": (DEEP, "RecursionError"), "huge": (HUGE, "over the"), "bad-bytes": (BAD_BYTES, "UTF-8")}


@pytest.mark.parametrize("hook", ["pre-tool-use", "post-tool-use"])
@pytest.mark.parametrize("kind", sorted(CAUSES))
def test_hostile_input_leaves_one_log_line_with_its_cause(hook, kind, tmp_path):
    """100,000-deep JSON, a 40 MB payload and bytes that are not UTF-8, through the real shims:
    exit 0, stdout empty or one JSON object, and exactly one line in memhooks.log that says
    why, no traceback."""
    data, cause = CAUSES[kind]
    db = tmp_path / "memhooks.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
    env.update(MEMHOOKS_DB=str(db), MEMHOOKS_NO_SPAWN="1", MEMHOOKS_PYTHON=sys.executable)
    r = subprocess.run([str(HOOKS / hook)], input=data, capture_output=True, env=env, timeout=120)
    assert r.returncode == 0
    out = r.stdout.strip()
    assert out == b"" or isinstance(json.loads(out), dict)
    lines = (tmp_path / "memhooks.log").read_text().splitlines()
    assert len(lines) == 1, lines
    assert f"{hook}: input refused: " in lines[0] and cause in lines[0], lines[0]
    assert "Traceback" not in lines[0]


def test_a_hook_with_a_closed_stdout_still_exits_zero(store):
    """The one hook-output writer: a reader that went away changes nothing (no log line, no
    traceback, exit 0)."""
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup",
                          "cwd": str(store.parent)}).encode()
    proc = subprocess.Popen([str(HOOKS / "session-start")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    proc.stdout.close()  # nobody reads the answer
    _, err = proc.communicate(payload, timeout=60)
    assert proc.returncode == 0 and err == b""
    log = store.parent / "memhooks.log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")
