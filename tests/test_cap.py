"""The size cap under a flood (benchmarks/cap.py at a small cap): the detached ingester's
upkeep keeps the store's folder within the cap at the end of every pass (and within 110% of
it after the hook and after the ingest), takes no more than
it must, and keeps what is read; when eviction cannot meet the cap it keeps the store and
says so in `memhooks stats` and `memhooks doctor`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run

sys.path.insert(0, str(ROOT / "benchmarks"))
import cap as bench  # benchmarks/cap.py

CAP = 2_000_000


@pytest.mark.parametrize("kind", ["entropy", "prose"])
def test_a_flood_of_three_caps_ends_every_pass_within_the_cap(tmp_path, kind):
    result = bench.flood(kind, CAP, str(tmp_path))  # 300 pages, one a pass
    table = bench.table(result)
    print(table)
    assert len(result.passes) >= 250, table
    assert sum(p.evicted for p in result.passes) > 0, table  # the flood did reach the cap
    assert all(p.after <= CAP for p in result.passes), table
    assert all(p.peak <= 1.1 * CAP for p in result.passes), table  # after the hook, the ingest
    assert result.hot_served and all(result.last_read_served) and len(result.last_read_served) == 3, table
    assert result.unmet is None, table
    # It takes what must go, not the store: after every pass that evicted, the folder is
    # still more than half the cap and holds documents besides the ones kept for reads.
    for p in result.passes[len(result.passes) // 2:]:
        if p.evicted:
            assert p.after >= 0.6 * CAP and p.documents >= 5, table


def _store_env(tmp_path: Path, cap: str) -> dict:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return dict(os.environ, MEMHOOKS_DB=str(tmp_path / "data" / "memhooks.db"), MEMHOOKS_NO_SPAWN="1",
                MEMHOOKS_OFFLINE="1", MEMHOOKS_PYTHON=sys.executable, MEMHOOKS_MAX_SIZE=cap,
                CLAUDE_PROJECT_DIR=str(project), XDG_STATE_HOME=str(tmp_path / "state"))


def _run_in(env: dict, code: str):
    r = run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n{code}"],
            env=env, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return r


def test_a_document_larger_than_the_cap_is_not_a_reason_to_empty_the_store(tmp_path):
    """Ten small documents, then one larger than the cap: the upkeep keeps them all and
    `stats` and `doctor` say why the cap cannot be met; within the cap again, they stop."""
    env = _store_env(tmp_path, "2MB")
    _run_in(env, """
import os
import cap as b
from memhooks.capture import ingester
db, project = os.environ["MEMHOOKS_DB"], os.environ["CLAUDE_PROJECT_DIR"]
b.journal(db, [b.payload(n, b.page_text("prose", n, 8000, b.vocabulary()), project) for n in range(10)])
ingester.main(["--background"])
b.journal(db, [b.payload(99, b.page_text("entropy", 99, 3_000_000, []), project)])
ingester.main(["--background"])
""")
    stats = json.loads(_run_in(env, "from memhooks.cli.main import main; main(['stats', '--json'])").stdout)
    assert stats["documents"]["count"] == 11
    unmet = stats["db"]["cap_unmet"]
    assert unmet is not None and "alone takes" in unmet["reason"] and unmet["cap"] == 2_000_000
    text = _run_in(env, "from memhooks.cli.main import main; main(['stats'])").stdout.decode()
    assert "the cap cannot be met by eviction: document #" in text
    doctor = _run_in(env, "from memhooks.cli.main import main; main(['doctor'])").stdout.decode()
    line = next(x for x in doctor.splitlines() if "cap cannot be met" in x)
    assert "alone takes" in line
    # `memhooks prune` says the same and keeps the store.
    out = _run_in(env, "from memhooks.cli.main import main; main(['prune'])").stdout.decode()
    assert "evicted 0 documents" in out and "the cap cannot be met by eviction" in out
    # A larger cap: met, and the word is gone.
    env["MEMHOOKS_MAX_SIZE"] = "20MB"
    _run_in(env, "from memhooks.capture import ingester; ingester.main(['--background'])")
    stats = json.loads(_run_in(env, "from memhooks.cli.main import main; main(['stats', '--json'])").stdout)
    assert stats["db"]["cap_unmet"] is None and stats["documents"]["count"] == 11


def test_the_cap_counts_every_file_of_the_folder(tmp_path):
    """A file the store does not name (left in its own folder) counts toward the cap."""
    env = _store_env(tmp_path, "1GB")
    _run_in(env, """
import os
import cap as b
from memhooks.capture import ingester
b.journal(os.environ["MEMHOOKS_DB"], [b.payload(1, b.page_text("prose", 1, 4000, b.vocabulary()), "/p")])
ingester.main(["--background"])
""")
    stray = tmp_path / "data" / "left-behind.bin"
    stray.write_bytes(os.urandom(300_000))
    stats = json.loads(_run_in(env, "from memhooks.cli.main import main; main(['stats', '--json'])").stdout)
    names = {f["name"]: f["bytes"] for f in stats["db"]["files"]}
    assert names["left-behind.bin"] >= 300_000
    assert stats["db"]["store_bytes"] == sum(names.values())


def test_under_a_small_cap_the_wal_is_checkpointed_early_and_writes_merge_no_level(tmp_path, monkeypatch):
    """A store connection under a 6 MB cap checkpoints at 16 pages and cuts the WAL back to
    256 KiB (a large cap keeps SQLite's defaults); the full-text index is written with
    FTS5's automerge off, its levels of two merged by the upkeep (usermerge 2)."""
    from memhooks.store.connect import closing, connect

    db = str(tmp_path / "data" / "memhooks.db")
    monkeypatch.setenv("MEMHOOKS_MAX_SIZE", "6MB")
    with closing(connect(db)) as conn:
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 16
        assert conn.execute("PRAGMA main.journal_size_limit").fetchone()[0] == 256 * 1024
        assert conn.execute("PRAGMA journal.journal_size_limit").fetchone()[0] == 256 * 1024
        config = dict(conn.execute("SELECT k, v FROM documents_fts_config").fetchall())
        assert config["automerge"] == 0 and config["usermerge"] == 2
    monkeypatch.setenv("MEMHOOKS_MAX_SIZE", "1GiB")
    with closing(connect(db)) as conn:
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        assert conn.execute("PRAGMA main.journal_size_limit").fetchone()[0] == 4 * 1024 * 1024
