"""`memhooks export | memhooks import` round trip on real stores (subprocesses)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from conftest import ROOT, db_rows, run
from memhooks.store.admission import content_hash

CLI = [sys.executable, "-m", "memhooks.cli.main"]


def _env(db: Path) -> dict:
    env = os.environ.copy()
    env["MEMHOOKS_DB"] = str(db)
    return env


def _fill(db: Path, tmp_path: Path) -> None:
    env = _env(db)
    proc = run([*CLI, "replay", ROOT / "examples" / "session.jsonl"], env=env)
    assert proc.returncode == 0, proc.stderr
    body = tmp_path / "body.md"
    body.write_text("### Routing\n\n```js\nrouter.get('/')\n```\n")
    for args in (["tier1", "react", "/facebook/react"], ["tier2", "/vercel/next.js", "routing", body]):
        proc = run([*CLI, "cache", "write", *args], env=env)
        assert proc.returncode == 0, proc.stderr


def _knowledge(db: Path) -> dict:
    return {
        "documents": sorted(r[0] for r in db_rows(db, "SELECT content_hash FROM documents")),
        "libraries": sorted(db_rows(db, "SELECT library_id, title, versions FROM libraries")),
        "tier1": sorted(db_rows(db, "SELECT project, name_key, library_id, origin FROM tier1")),
    }


def test_export_import_round_trip_into_an_empty_store(store, tmp_path):
    _fill(store, tmp_path)
    before = _knowledge(store)
    assert before["documents"] and before["libraries"] and before["tier1"]
    exported = run([*CLI, "export"], env=_env(store))
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.decode().splitlines()
    assert {json.loads(ln)["table"] for ln in lines} == {"documents", "libraries", "tier1"}

    other = tmp_path / "other" / "memhooks.db"
    imported = run([*CLI, "import", "--json"], stdin=exported.stdout, env=_env(other))
    assert imported.returncode == 0, imported.stderr
    counts = json.loads(imported.stdout)
    assert counts["rejected"] == 0 and sum(counts["added"].values()) == len(lines)
    assert _knowledge(other) == before
    # The full-text index follows the imported documents.
    assert db_rows(other, "SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'routing'")[0][0] >= 1

    again = run([*CLI, "import", "--json"], stdin=exported.stdout, env=_env(other))
    counts = json.loads(again.stdout)
    assert sum(counts["added"].values()) == 0 and sum(counts["existing"].values()) == len(lines)


def test_import_validates_and_redacts_outside_records(store, tmp_path):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    good: dict[str, Any] = {"table": "documents", "row": {
        "project": "/p", "source": "/x/y", "source_tool": "context7", "title": "T",
        "content": f"### Setup\n\nexport GITHUB_TOKEN={token}\n"}}
    good["row"]["content_hash"] = content_hash(good["row"]["content"])  # of the text as sent
    forged = {"table": "documents", "row": dict(good["row"], content="### Other\n\ntext\n")}
    lines = [
        json.dumps(good),
        json.dumps(forged),  # a hash that is not its content's: refused
        "{not json",
        json.dumps({"table": "events", "row": {"payload": "x"}}),
        json.dumps({"table": "tier1", "row": {"project": "/p", "name_key": "x", "origin": "evil",
                                             "resolved_at": 1, "expires_at": 2}}),
    ]
    proc = run([*CLI, "import", "--json"], stdin="\n".join(lines) + "\n", env=_env(store))
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout)
    assert counts["added"]["documents"] == 1 and counts["rejected"] == 4
    content, digest = db_rows(store, "SELECT document_text(body), content_hash FROM documents")[0]
    assert token not in content and digest == content_hash(content)
    for f in store.parent.iterdir():
        assert token.encode() not in f.read_bytes(), f


def test_import_of_nothing_usable_fails_in_one_line(store):
    proc = run([*CLI, "import"], stdin="garbage\n", env=_env(store))
    assert proc.returncode == 1
    assert proc.stderr.decode().count("\n") >= 1 and "Traceback" not in proc.stderr.decode()
