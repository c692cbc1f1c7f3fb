"""The optional hybrid ranking (`memhooks[semantic]`, memhooks.recall.semantic): the model
loads from the installed package with no network, vectors are kept per section and go with
it, BM25's pages are reranked by their rank plus the cosine of the section that found them;
without the extra, search is BM25 alone and says so once in memhooks.log. Each case with a
store runs as its own process on a real one."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memhooks.recall import semantic

ROOT = Path(__file__).resolve().parent.parent

SETUP = """
import json, os, sys
{block}
from memhooks.recall import search, semantic
from memhooks.store.connect import connect, transaction
from memhooks.store.projections import upsert_document
conn = connect(os.environ["MEMHOOKS_DB"])
docs = [("# Cars\\n\\nKeep the automobile engine serviced; change the oil.", "Cars"),
        ("# Gardens\\n\\nWater tomatoes in the morning.", "Gardens"),
        ("# Engines\\n\\nAn engine needs oil and fuel.", "Engines")]
ids = []
with transaction(conn):
    for i, (text, title) in enumerate(docs):
        ids.append(upsert_document(conn, project="/p", source=f"https://e/{{i}}", source_tool="webfetch",
                                   type="web-page", provenance="capture", content=text, title=title,
                                   url=f"https://e/{{i}}")[0])
out = {{"available": semantic.available()}}
out["oil"] = [r["id"] for r in search.search_documents(conn, "engine oil")]
out["again"] = [r["id"] for r in search.search_documents(conn, "engine oil")]
out["how"] = [r["match"] for r in search.search_documents(conn, "engine oil", 5)]
out["vectors"] = conn.execute("SELECT count(*) FROM section_vectors").fetchone()[0]
with transaction(conn):
    conn.execute("DELETE FROM documents WHERE id = ?", (ids[0],))
out["vectors_after_delete"] = conn.execute("SELECT count(*) FROM section_vectors").fetchone()[0]
out["ids"] = ids
# a page written after the vectors were read is searched too (the cached matrix notices)
with transaction(conn):
    new = upsert_document(conn, project="/p", source="https://e/new", source_tool="webfetch",
                          type="web-page", provenance="capture", content="# Bicycles\\n\\nPump the tyres.",
                          title="Bicycles", url="https://e/new")[0]
out["new"] = new
out["after_new"] = [r["id"] for r in search.search_documents(conn, "engine oil")]
out["vectors_after_new"] = conn.execute("SELECT count(*) FROM section_vectors").fetchone()[0]
print(json.dumps(out))
"""


def run(tmp_path: Path, block: str = "", semantic: str = "1") -> dict:
    env = {**os.environ, "MEMHOOKS_DB": str(tmp_path / "memhooks.db"), "MEMHOOKS_SEMANTIC": semantic,
           # no network: a model that tried to download would fail
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
           "HF_HUB_OFFLINE": "1", "CLAUDE_PROJECT_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", SETUP.format(block=block)], env=env, capture_output=True,
                          text=True, timeout=120, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def log_lines(tmp_path: Path) -> list[str]:
    path = tmp_path / "memhooks.log"
    return path.read_text().splitlines() if path.exists() else []


def test_a_missing_extra_degrades_to_bm25_with_one_log_line(tmp_path):
    # The extra made missing for this process: importing wordllama raises ImportError.
    got = run(tmp_path, block='sys.modules["wordllama"] = None; sys.modules["numpy"] = None')
    assert got["available"] is False
    assert got["oil"] == got["again"] and got["oil"][0] == got["ids"][2]  # BM25 alone
    assert set(got["how"]) <= {"fts", "fts-any"} and got["vectors"] == 0
    lines = [line for line in log_lines(tmp_path) if "semantic" in line]
    assert len(lines) == 1 and "pip install 'memhooks[semantic]'" in lines[0]


def test_off_by_default_even_with_the_extra(tmp_path):
    got = run(tmp_path, semantic="")
    assert got["available"] is False and got["vectors"] == 0
    assert not [line for line in log_lines(tmp_path) if "semantic" in line]


@pytest.mark.skipif(importlib.util.find_spec("wordllama") is None, reason="the [semantic] extra is not installed")
def test_the_model_loads_offline_and_vectors_follow_sections(tmp_path):
    got = run(tmp_path)
    assert got["available"] is True
    assert got["vectors"] == 3 and got["vectors_after_delete"] == 2  # one section each; its vector goes with it
    assert set(got["oil"]) == set(got["ids"])  # fused: the embedding adds the page no word matched
    assert got["oil"][0] in (got["ids"][0], got["ids"][2])
    assert "semantic" in got["how"]
    assert got["new"] in got["after_new"] and got["vectors_after_new"] == 3  # 2 left + the new page's
    assert not [line for line in log_lines(tmp_path) if "semantic" in line]


def test_the_rerank_keeps_bm25s_order_unless_the_embedding_is_clearly_surer():
    bm25 = [(10, 1), (20, 2), (30, 3)]
    # equal cosines: BM25's order
    assert semantic.rerank(bm25, [], {1: 0.4, 2: 0.4, 3: 0.4}) == [10, 20, 30]
    # one rank is worth about 1 / ((K + 1) * BETA) of cosine (0.065): a small edge does not
    # reorder, a clear one does
    assert semantic.rerank(bm25, [], {1: 0.40, 2: 0.43, 3: 0.40}) == [10, 20, 30]
    assert semantic.rerank(bm25, [], {1: 0.40, 2: 0.55, 3: 0.40}) == [20, 10, 30]
    # a page only the embedding found competes with its cosine alone: after BM25's pages
    assert semantic.rerank(bm25, [(40, 4, 0.9), (10, 1, 0.9)], {1: 0.4, 2: 0.4, 3: 0.4}) == [10, 20, 30, 40]
    # a section with no vector counts as cosine 0
    assert semantic.rerank(bm25, [], {2: 0.4, 3: 0.4})[-1] == 10
