"""`memhooks import-transcripts` on transcripts the real Claude Code CLI wrote
(tests/fixtures/transcripts, recorded by tests/e2e/record_transcripts.py), and on
synthetic ones for streaming, tolerance and constant memory."""

from __future__ import annotations

import json
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import db_rows, run
from helpers_transcripts import SESSION, write_synthetic

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
MEMHOOKS = [sys.executable, "-m", "memhooks.cli.main"]
PROJECT = "/home/user/code/demo-app"


def cli(*args, env=None, timeout=120):
    return run([*MEMHOOKS, *args], env=env, timeout=timeout)


def _json(proc) -> dict:
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def _read_all(path: Path):
    from memhooks.capture.transcripts import ReadStats, read_transcript

    stats = ReadStats()
    with open(path, "rb") as fh:
        calls = list(read_transcript(fh, str(path), stats))
    return calls, stats


# ----------------------------------------------------------------------------- the reader

def test_reader_pairs_every_captured_call_of_the_real_cli():
    calls, stats = _read_all(FIXTURES / "capture.jsonl")
    names = [c.tool_name for c in calls]
    assert names == ["mcp__context7__resolve-library-id", "mcp__context7__query-docs", "WebFetch",
                     "mcp__exa__web_search_exa", "WebSearch", "mcp__exa__web_fetch_exa"]
    assert stats.tool_uses == stats.results == 6 and stats.unanswered == 0
    assert stats.bad_lines == 0 and len(stats.sessions) == 1
    by = {c.tool_name: c for c in calls}
    # the structured toolUseResult is what a PostToolUse hook gets as tool_response
    assert by["WebFetch"].tool_response["code"] == 200
    assert by["WebSearch"].tool_response["results"][0]["content"][0]["url"].startswith("https://")
    assert by["mcp__context7__query-docs"].tool_response[0]["type"] == "text"
    assert all(c.cwd == PROJECT and c.at and not c.failed for c in calls)
    payload = by["mcp__context7__query-docs"].payload()
    assert payload["hook_event_name"] == "PostToolUse"
    assert payload["session_id"] == calls[0].session_id and payload["tool_use_id"]
    assert payload["memhooks_import"]["source"] == "transcript"


def test_reader_errors_and_denials():
    calls, stats = _read_all(FIXTURES / "errors.jsonl")
    assert [c.failed for c in calls] == [False, False, True]  # Context7 errors are normal text
    assert "401" in calls[2].error and not calls[2].denied
    assert calls[2].payload()["hook_event_name"] == "PostToolUseFailure"
    calls, stats = _read_all(FIXTURES / "denied.jsonl")
    denied = [c.tool_name for c in calls if c.denied]
    assert denied == ["WebFetch", "mcp__exa__web_search_exa"]
    assert "Bash" not in [c.tool_name for c in calls]  # not a captured tool
    assert stats.denials == 2


def test_reader_tolerates_cut_lines_and_unknown_shapes(tmp_path):
    good = (FIXTURES / "capture.jsonl").read_bytes().splitlines(keepends=True)
    lines = [b"\x00\xff not json\n", b"[1, 2]\n", b'{"type": "user", "message": {"content": 5}}\n',
             b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "WebFetch"}]}}\n',
             b'{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "nope"}]}}\n',
             b"\n", b"x" * 200_000 + b"\n"]
    data = b"".join(lines) + b"".join(good) + good[-1][: len(good[-1]) // 2]  # last line cut short
    path = tmp_path / "messy.jsonl"
    path.write_bytes(data)
    from memhooks.capture.transcripts import ReadStats, read_transcript

    stats = ReadStats()
    with open(path, "rb") as fh:
        calls = list(read_transcript(fh, str(path), stats, max_line_bytes=100_000))
    assert len(calls) == 6
    assert stats.bad_lines == 3  # binary, a JSON array, the cut last line
    assert stats.long_lines == 1
    assert stats.unknown_shapes == 2  # content 5, a tool_use without id
    assert stats.bytes_read == len(data)


def test_pending_tool_uses_are_bounded(tmp_path):
    path = tmp_path / "t.jsonl"
    with open(path, "w") as fh:
        for i in range(50):
            fh.write(json.dumps({"type": "assistant", "sessionId": "s", "message": {"content": [
                {"type": "tool_use", "id": f"t{i}", "name": "WebFetch", "input": {"url": "u"}}]}}) + "\n")
    from memhooks.capture.transcripts import ReadStats, read_transcript

    stats = ReadStats()
    with open(path, "rb") as fh:
        assert list(read_transcript(fh, str(path), stats, max_pending=8)) == []
    assert stats.evicted == 42 and stats.unanswered == 8


# ----------------------------------------------------------------------------- the command

def _ctx7_transcript(path: Path) -> None:
    """A session in the shape the real CLI writes (rows as in denied.jsonl): a `ctx7 docs`
    lookup through Bash with the real ctx7 0.5.12 output (tests/fixtures/ctx7), and a Bash
    call that merely mentions ctx7."""
    docs = json.loads((FIXTURES.parent / "ctx7" / "docs_text.json").read_text())
    calls = [("toolu_ctx7_docs", docs["command"], docs["stdout"]),
             ("toolu_ctx7_echo", 'echo ctx7 docs /facebook/react "useEffect cleanup"',
              "ctx7 docs /facebook/react useEffect cleanup")]
    rows = []
    for n, (tid, command, stdout) in enumerate(calls):
        common = {"sessionId": "5e55f0e1-0c7a-4d1e-9a7b-000000000001", "cwd": PROJECT,
                  "isSidechain": False, "userType": "external", "version": "2.1.337"}
        rows.append({**common, "type": "assistant", "uuid": f"a{n}",
                     "timestamp": f"2026-12-01T21:40:0{n}.000Z",
                     "message": {"role": "assistant", "content": [
                         {"type": "tool_use", "id": tid, "name": "Bash",
                          "input": {"command": command, "description": "Context7 docs"}}]}})
        rows.append({**common, "type": "user", "uuid": f"u{n}",
                     "timestamp": f"2026-12-01T21:40:0{n}.500Z",
                     "message": {"role": "user", "content": [
                         {"tool_use_id": tid, "type": "tool_result", "content": stdout, "is_error": False}]},
                     "toolUseResult": {"stdout": stdout, "stderr": "", "interrupted": False,
                                       "isImage": False, "noOutputExpected": False}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_ctx7_lookup_through_bash_is_imported_like_a_live_one(store, tmp_path):
    transcript = tmp_path / "t" / "ctx7.jsonl"
    transcript.parent.mkdir()
    _ctx7_transcript(transcript)
    calls, stats = _read_all(transcript)
    assert [c.tool_use_id for c in calls] == ["toolu_ctx7_docs"]  # the echo is not a lookup
    assert calls[0].tool_response["stdout"].startswith("### useEffect cleanup function")
    out = _json(cli("import-transcripts", "--json", str(transcript.parent)))
    assert out["tool_calls"]["found"] == 1 and out["events"]["new"] == 1
    rows = db_rows(store, "SELECT source_tool, library_id, document_text(body) FROM documents")
    assert [(r[0], r[1]) for r in rows] == [("context7", "/facebook/react")], rows
    assert "heron cleanup ledger" in rows[0][2]


def test_import_real_transcripts_then_nothing_new(store, tmp_path):
    out = _json(cli("import-transcripts", "--json", FIXTURES))
    assert out["files"] == 3 and out["sessions"] == 3
    assert out["tool_calls"]["found"] == 12 and out["tool_calls"]["denied"] == 2
    assert out["events"]["new"] == 10  # denials are not journaled (no hook fires for them)
    assert out["documents"]["new"] >= 7 and out["errors_skipped"]["total"] == 0
    rows = db_rows(store, "SELECT source_tool, type FROM documents")
    kinds = {r for r in rows}
    assert ("context7", "library-docs") in kinds and ("context7", "library-resolve") in kinds
    assert {"webfetch", "websearch", "exa"} <= {t for t, _ in rows}
    # the error texts are journaled, not stored
    docs = " ".join(c for (c,) in db_rows(store, "SELECT document_text(body) FROM documents"))
    assert "does not exist" not in docs and "No libraries found" not in docs and "401" not in docs
    events = db_rows(store, "SELECT hook_event_name, session_id, tool_use_id, project, state, received_at"
                            " FROM events ORDER BY id")
    assert {e[0] for e in events} == {"PostToolUse", "PostToolUseFailure"}
    assert all(e[1] and e[2] and e[3] == PROJECT for e in events)
    # original time: the transcript's timestamps, on events and captures alike
    calls, _ = _read_all(FIXTURES / "capture.jsonl")
    first = calls[0]
    ev = [e for e in events if e[2] == first.tool_use_id and e[1] == first.session_id][0]
    assert abs(ev[5] - first.at) < 1e-3
    cap = db_rows(store, "SELECT min(captured_at) FROM captures")[0][0]
    assert abs(cap - min(c.at for c in calls)) < 1
    counts = db_rows(store, "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM documents),"
                            " (SELECT count(*) FROM captures)")[0]
    again = _json(cli("import-transcripts", "--json", FIXTURES))
    assert again["events"]["new"] == 0 and again["events"]["already_journaled"] == 10
    assert again["documents"]["new"] == 0
    assert db_rows(store, "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM documents),"
                          " (SELECT count(*) FROM captures)")[0] == counts
    # the imported documents are found like live captures
    hit = cli("search", "--json", "flamingo teardown")
    assert json.loads(hit.stdout)["count"] >= 1


def test_a_call_captured_live_is_not_imported_again(store):
    calls, _ = _read_all(FIXTURES / "capture.jsonl")
    live = calls[1].payload()
    live.pop("memhooks_import")
    env = dict(os.environ, MEMHOOKS_NO_SPAWN="1")
    from conftest import run_hook

    assert run_hook("post-tool-use", live, env=env).returncode == 0
    out = _json(cli("import-transcripts", "--json", FIXTURES / "capture.jsonl"))
    assert out["events"]["already_journaled"] == 1 and out["events"]["new"] == 5
    n = db_rows(store, "SELECT count(*) FROM events WHERE tool_use_id = ?", (calls[1].tool_use_id,))
    assert n == [(1,)]


def test_packed_events_are_not_imported_again(store):
    """Once the journal packs the imported events (their tool_use ids kept whole), a
    second import still knows every call."""
    from contextlib import closing

    from memhooks.store.connect import connect
    from memhooks.store.packs import pack_settled

    assert _json(cli("import-transcripts", "--json", FIXTURES))["events"]["new"] == 10
    with closing(connect(str(store))) as conn:
        assert pack_settled(conn, min_events=1) >= 9
    left = db_rows(store, "SELECT count(*) FROM events")[0][0]
    assert left <= 1  # the highest row stays
    calls, _ = _read_all(FIXTURES / "capture.jsonl")
    with closing(connect(str(store))) as conn:
        packed = conn.execute("SELECT data FROM event_packs").fetchall()
    raw = b"".join(lzma.decompress(d) for (d,) in packed)
    assert calls[0].tool_use_id.encode() in raw  # kept whole
    again = _json(cli("import-transcripts", "--json", FIXTURES))
    assert again["events"]["new"] == 0 and again["events"]["already_journaled"] == 10


def test_summary_and_progress_for_people(store):
    p = cli("import-transcripts", FIXTURES)
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert "imported from 3 transcript files" in out and "3 sessions" in out
    assert "tool calls found: 12 (1 failed, 2 denied)" in out
    assert "documents:" in out and "errors skipped: 0" in out
    assert "reading transcripts" in p.stderr.decode()
    again = cli("import-transcripts", FIXTURES).stdout.decode()
    assert "journaled: 0 new, 10 already in the store" in again
    assert "documents: 0 new" in again


def test_dry_run_writes_nothing(tmp_path, monkeypatch):
    db = tmp_path / "nowhere" / "memhooks.db"
    env = dict(os.environ, MEMHOOKS_DB=str(db))
    out = _json(cli("import-transcripts", "--json", "--dry-run", FIXTURES, env=env))
    assert out["dry_run"] and out["events"]["new"] == 10
    assert not (tmp_path / "nowhere").exists()


def test_since_and_project_filters(store, tmp_path):
    out = _json(cli("import-transcripts", "--json", "--since", "2999-01-01", FIXTURES))
    assert out["files"] == 0 and out["events"]["new"] == 0  # files last written before it
    far = tmp_path / "elsewhere"
    far.mkdir()
    out = _json(cli("import-transcripts", "--json", "--project", far, FIXTURES))
    assert out["events"]["new"] == 0 and out["tool_calls"]["out_of_scope"] == 12
    out = _json(cli("import-transcripts", "--json", "--project", PROJECT, "--since", "30d", FIXTURES))
    assert out["events"]["new"] == 10
    bad = cli("import-transcripts", "--since", "last tuesday", FIXTURES)
    assert bad.returncode == 2
    err = bad.stderr.decode().strip()
    assert err.count("\n") == 0 and "--since" in err


def test_default_locations(tmp_path, store):
    home = tmp_path / "home"
    cfg = tmp_path / "cfg"
    for root, name in ((home / ".claude" / "projects" / "-home-user-code-demo-app", "capture.jsonl"),
                       (cfg / "projects" / "-x", "errors.jsonl")):
        root.mkdir(parents=True)
        shutil.copy(FIXTURES / name, root / name)
    env = dict(os.environ, HOME=str(home))
    env.pop("CLAUDE_CONFIG_DIR", None)
    assert _json(cli("import-transcripts", "--json", "--dry-run", env=env))["files"] == 1
    env["CLAUDE_CONFIG_DIR"] = str(cfg)
    out = _json(cli("import-transcripts", "--json", env=env))
    assert out["files"] == 2 and out["events"]["new"] == 9


def test_missing_path_is_one_line(store, tmp_path):
    p = cli("import-transcripts", tmp_path / "nope")
    assert p.returncode == 1
    assert "no such file or folder" in p.stderr.decode()
    assert "Traceback" not in p.stderr.decode()


def test_synthetic_transcript_imports_every_call(store, tmp_path):
    path = tmp_path / "s.jsonl"
    info = write_synthetic(path, 3, captured_every=2, filler_bytes=5000)
    out = _json(cli("import-transcripts", "--json", path))
    assert out["tool_calls"]["found"] == info["captured"] == out["events"]["new"]
    assert out["documents"]["new"] == info["captured"]
    assert db_rows(store, "SELECT count(DISTINCT session_id) FROM captures") == [(1,)]
    assert db_rows(store, "SELECT session_id FROM captures LIMIT 1") == [(SESSION,)]


# ----------------------------------------------------------------------------- memory

_CHILD = """
import resource, sys
from memhooks.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("MAXRSS_KB %d\\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_rss_kb(args, env) -> tuple[int, dict]:
    p = subprocess.run([sys.executable, "-c", _CHILD, *map(str, args)], capture_output=True,
                       env=env, timeout=900)
    err = p.stderr.decode()
    line = [ln for ln in err.splitlines() if ln.startswith("MAXRSS_KB")]
    assert line, err[-3000:]
    return int(line[0].split()[1]), json.loads(p.stdout)


@pytest.mark.slow
def test_memory_stays_flat_from_20_to_200_mb(tmp_path):
    """Peak RSS of a full import of a 200 MB transcript is within a few MiB of a 20 MB one
    (the reader holds one line; the journal is written in small batches)."""
    peaks = {}
    for mb in (20, 200):
        path = tmp_path / f"t{mb}.jsonl"
        info = write_synthetic(path, mb, captured_every=8, filler_bytes=60_000, doc_words=300)
        env = dict(os.environ, MEMHOOKS_DB=str(tmp_path / f"db{mb}" / "memhooks.db"),
                   MEMHOOKS_NO_SPAWN="1")
        peaks[mb], out = _peak_rss_kb(["import-transcripts", "--json", path], env)
        assert out["events"]["new"] == info["captured"] and out["errors_skipped"]["total"] == 0
        path.unlink()
    print(f"peak RSS: 20 MB -> {peaks[20] / 1024:.1f} MiB, 200 MB -> {peaks[200] / 1024:.1f} MiB")
    assert peaks[200] < peaks[20] + 16 * 1024, peaks


def test_secrets_in_a_transcript_never_reach_the_store(store, tmp_path):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    key = "sk-ant-" + "x" * 30
    lines = []
    for row in (FIXTURES / "capture.jsonl").read_text().splitlines():
        if '"WebFetch"' in row or "flux capacitor" in row:
            row = row.replace("https://127.0.0.1:8443/page", f"https://127.0.0.1:8443/page?api_key={key}")
            row = row.replace("Summary of the page:", f"Summary of the page (token {secret}):")
        lines.append(row)
    path = tmp_path / "secret.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = _json(cli("import-transcripts", "--json", path))
    assert out["events"]["new"] == 6
    for table, col in (("events", "payload"), ("documents", "document_text(body)"), ("documents", "url"),
                       ("documents", "source"), ("documents", "metadata")):
        blob = " ".join(str(v) for (v,) in db_rows(store, f"SELECT {col} FROM {table}"))
        assert secret not in blob and key not in blob, (table, col)
    raw = b"".join(p.read_bytes() for p in store.parent.iterdir() if p.is_file())
    assert secret.encode() not in raw and key.encode() not in raw


def test_lines_without_session_id_take_the_file_name(tmp_path):
    rows = []
    for row in (FIXTURES / "capture.jsonl").read_text().splitlines():
        d = json.loads(row)
        d.pop("sessionId", None)
        rows.append(json.dumps(d))
    path = tmp_path / "0f0e0d0c-1111-4222-8333-444455556666.jsonl"
    path.write_text("\n".join(rows) + "\n")
    calls, stats = _read_all(path)
    assert len(calls) == 6 and stats.unknown_shapes == 0
    assert {c.session_id for c in calls} == {"0f0e0d0c-1111-4222-8333-444455556666"}


@pytest.mark.parametrize("folder", ["plain", "odd#name?x"])
def test_dry_run_counts_what_the_import_then_does(store, tmp_path, folder):
    """On a store that journaled one session (partly packed), and a second session's calls
    captured live: the dry run's counts are the import's, for a plain path and one with
    `#` and `?` (SQLite's URI characters)."""
    from memhooks.store.connect import closing, connect
    from memhooks.store.packs import pack_settled

    src = tmp_path / folder / "transcripts"
    src.mkdir(parents=True)
    for name in ("capture.jsonl", "errors.jsonl", "denied.jsonl"):
        shutil.copy(FIXTURES / name, src / name)
    env = dict(os.environ, MEMHOOKS_DB=str(tmp_path / folder / "data" / "memhooks.db"))
    first = _json(cli("import-transcripts", "--json", src / "capture.jsonl", env=env))
    assert first["events"]["new"] > 2
    with closing(connect(env["MEMHOOKS_DB"])) as conn:
        low = conn.execute("SELECT min(id) FROM events").fetchone()[0]
        assert pack_settled(conn, upto=low + 1, min_events=1) == 2  # two of them packed
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == first["events"]["new"] - 2
    # One call of the errors session, as a live hook journaled it.
    calls, _ = _read_all(src / "errors.jsonl")
    live = calls[0].payload()
    del live["memhooks_import"]
    hook = run([Path(__file__).resolve().parent.parent / "hooks" / "post-tool-use"],
               stdin=json.dumps(live), env=dict(env, MEMHOOKS_NO_SPAWN="1"))
    assert hook.returncode == 0
    dry = _json(cli("import-transcripts", "--json", "--dry-run", src, env=env))
    real = _json(cli("import-transcripts", "--json", src, env=env))
    assert dry["dry_run"] and not real["dry_run"], (dry, real)
    assert dry["events"]["already_journaled"] == first["events"]["new"] + 1
    for key in ("new", "already_journaled"):
        assert dry["events"][key] == real["events"][key], key
    assert dry["tool_calls"] == real["tool_calls"]
    assert dry["errors_skipped"]["too_large"] == real["errors_skipped"]["too_large"]
    again = _json(cli("import-transcripts", "--json", "--dry-run", src, env=env))
    assert again["events"]["new"] == 0
    assert again["events"]["already_journaled"] == real["events"]["new"] + real["events"]["already_journaled"]
