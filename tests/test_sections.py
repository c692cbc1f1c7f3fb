"""Sections as the unit of search: splitting (memhooks.sections), anchors from markdown and
HTML pages, the sections the store keeps (triggers, migration, reindex), and the search
semantics built on them (stop words, identifiers, stemming with exact matches first, the
library argument, one section through get_document), on real SQLite files."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from memhooks import sections
from memhooks.cli.main import main as cli_main
from memhooks.ingest.pages import html_to_text
from memhooks.recall import docwindows, ranking, search, serve
from memhooks.store import doc_slices, migrations
from memhooks.store.connect import connect, transaction
from memhooks.store.projections import (
    clear_derived,
    restore_access,
    upsert_document,
    upsert_library,
    upsert_tier2,
)

MD = """Intro before any heading.

# Guide {#guide}

Opening words.

## Install <a id="install-it"></a>

pip install thing

```bash
# not a heading: inside a fence
echo hi
```

### On Windows

Use the launcher.

## Configure ##

Settings go here.
"""


def texts(text: str) -> list[tuple[str, str | None, str]]:
    return [(path, anchor, text[start:start + length]) for start, length, path, anchor in sections.spans(text)]


def test_markdown_sections_keep_heading_paths_and_anchors():
    got = texts(MD)
    assert [(p, a) for p, a, _ in got] == [
        ("", None), ("Guide", "guide"), ("Guide > Install", "install-it"),
        ("Guide > Install > On Windows", None), ("Guide > Configure", None)]
    assert got[0][2].startswith("Intro") and "# not a heading" in got[2][2]
    assert "".join(t for _, _, t in got) == MD  # the sections tile the text


def test_html_pages_keep_their_heading_ids_as_anchors():
    page = ('<html><head><title>T</title></head><body><h1>Title</h1><p>intro</p>'
            '<section id="getting-started"><h2>Getting started</h2><p>a</p></section>'
            '<h2>Usage<a class="headerlink" href="#usage">¶</a></h2><p>b</p>'
            '<h3 id=opts.more>Options</h3><p>c</p><h2>Plain</h2><p>d</p></body></html>')
    _title, text = html_to_text(page)
    got = [(p, a) for p, a, _ in texts(text)]
    assert got == [("Title", None), ("Title > Getting started", "getting-started"),
                   ("Title > Usage", "usage"), ("Title > Usage > Options", "opts.more"),
                   ("Title > Plain", None)]


def test_sections_are_bounded():
    long = "# Big\n\n" + ("a paragraph of words " * 20 + "\n\n") * 200
    spans = sections.spans(long)
    assert len(spans) > 1 and all(length <= sections.MAX_CHARS for _, length, _, _ in spans)
    assert {path for _, _, path, _ in spans} == {"Big"}
    many = "".join(f"## h{i}\nx\n" for i in range(sections.MAX_SECTIONS + 50))
    spans = sections.spans(many)
    assert len(spans) == sections.MAX_SECTIONS
    assert spans[-1][0] + spans[-1][1] == len(many)  # the last one runs to the end
    assert sections.spans_json(None) == "[]" and sections.spans("") == []


@pytest.fixture
def conn(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_DB", str(tmp_path / "memhooks.db"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    c = connect(str(tmp_path / "memhooks.db"))
    yield c
    c.close()


def add(conn, content: str, title: str, url: str, library_id: str | None = None) -> int:
    with transaction(conn):
        doc_id, _ = upsert_document(conn, project="/p", source=url, source_tool="webfetch",
                                    type="web-page", provenance="capture", content=content,
                                    title=title, url=url, library_id=library_id)
    assert doc_id is not None
    return doc_id


def stored(conn) -> list[tuple]:
    return [tuple(r) for r in conn.execute(
        "SELECT document_id, ord, start, length, headings, anchor FROM sections ORDER BY document_id, ord")]


def test_the_store_keeps_sections_in_step_with_documents(conn):
    doc = add(conn, MD, "Guide", "https://docs.example/guide")
    rows = stored(conn)
    assert [(r[4], r[5]) for r in rows] == [(p, a) for _s, _l, p, a in sections.spans(MD)]
    assert conn.execute("SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'launcher'").fetchone()[0] == 1
    with transaction(conn):
        conn.execute("DELETE FROM documents WHERE id = ?", (doc,))
    assert stored(conn) == []
    assert conn.execute("SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'launcher'").fetchone()[0] == 0
    conn.execute("INSERT INTO sections_fts (sections_fts) VALUES ('integrity-check')")


def test_reindex_gives_the_same_sections(conn):
    add(conn, MD, "Guide", "https://docs.example/guide")
    before = [r[1:] for r in stored(conn)]
    with transaction(conn):
        clear_derived(conn)
        restore_access(conn)
    add(conn, MD, "Guide", "https://docs.example/guide")
    assert [r[1:] for r in stored(conn)] == before
    conn.execute("INSERT INTO sections_fts (sections_fts) VALUES ('integrity-check')")


def test_the_migration_builds_sections_for_an_existing_store(conn):
    add(conn, MD, "Guide", "https://docs.example/guide")
    add(conn, "# Other\n\nsome text {#x}\n\n## Part\n\nmore", "Other", "https://docs.example/o")
    made = stored(conn)
    # The store as it was before the migration: no sections, no index, no triggers.
    for name in ("sections_ai", "sections_bd", "sections_bu", "sections_au"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE sections_fts")
    conn.execute("DROP VIEW section_texts")
    conn.execute("DROP TABLE sections")

    m016 = next(fn for fn in migrations.MIGRATIONS if fn.__name__ == "m016_sections")
    m016(sqlite_utils.Database(conn))
    assert stored(conn) == made
    conn.execute("INSERT INTO sections_fts (sections_fts) VALUES ('integrity-check')")
    assert conn.execute("SELECT count(*) FROM sections_fts WHERE sections_fts MATCH 'launcher'").fetchone()[0] == 1


# ----------------------------------------------------------------------------- search

FILLER = "\n\n".join(f"Paragraph {i} about unrelated matters of the day." for i in range(40))


def test_a_result_is_a_page_by_its_best_section(conn):
    doc = add(conn, f"# Manual\n\n{FILLER}\n\n## Vacuum the database {{#vacuum}}\n\nRun VACUUM to compact "
                    f"the file.\n\n## Other\n\n{FILLER}", "Manual", "https://docs.example/manual")
    r = search.search_documents(conn, "how do I compact the database with vacuum")
    assert r[0]["id"] == doc and r[0]["anchor"] == "vacuum"
    assert r[0]["section"] == "Manual > Vacuum the database"
    assert r[0]["section_url"] == "https://docs.example/manual#vacuum"
    assert "Run VACUUM" in r[0]["snippet"]
    assert len(r) == 1  # one result per page


def test_stop_and_question_words_need_not_match(conn):
    doc = add(conn, "# Hooks\n\nRegister a hook with register_models.", "Hooks", "https://docs.example/h")
    r = search.search_documents(conn, "how does one register models vs what")
    assert [x["id"] for x in r] == [doc] and r[0]["match"] == "fts"
    assert ranking.Query("what is the difference between pipx vs pip").terms == [("pipx",), ("pip",)]
    assert ranking.Query("how does it").terms  # only stop words: they are the query


def test_identifiers_match_as_phrases(conn):
    scattered = add(conn, "# A\n\nThe db is here. Atomic writes elsewhere. " + FILLER, "A", "https://docs.example/a")
    exact = add(conn, "# B\n\nWrap writes in db.atomic() to group them.", "B", "https://docs.example/b")
    assert search.search_documents(conn, "db.atomic")[0]["id"] == exact
    assert [x["id"] for x in search.search_documents(conn, "db.atomic") if x["match"] == "fts"] == [exact]
    assert scattered in [x["id"] for x in search.search_documents(conn, "db atomic")]
    assert ranking.Query("@vitejs/plugin-react std::vector get_model").terms == [
        ("vitejs", "plugin", "react"), ("std", "vector"), ("get", "model")]
    camel = add(conn, "# C\n\nCall useEffect for effects.", "C", "https://docs.example/c")
    assert search.search_documents(conn, "useEffect")[0]["id"] == camel


def test_stemming_with_exact_matches_first(conn):
    stemmed = add(conn, "# Render\n\nHow to render a template. Render it twice; render often.",
                  "Templates", "https://docs.example/render")
    exact = add(conn, "# Output\n\nRendering output happens last.", "Output", "https://docs.example/rendering")
    got = [x["id"] for x in search.search_documents(conn, "rendering")]
    assert got == [exact, stemmed]  # "rendering" finds "render" too, the exact word first
    assert [x["id"] for x in search.search_documents(conn, "render")][0] == stemmed


def test_an_identifier_as_written_comes_before_its_stemmed_words(conn):
    stemmed = add(conn, "# Models\n\nThe registered models, registering models, models registered.",
                  "Models", "https://docs.example/models")
    written = add(conn, "# Hooks\n\nA plugin calls register_models() once.", "Hooks",
                  "https://docs.example/hooks")
    assert [x["id"] for x in search.search_documents(conn, "register_models")] == [written, stemmed]


def test_the_word_index_holds_the_large_documents_only(conn):
    # The serve decision asks it which large documents hold a word (it reads small ones whole).
    assert all("262144" in sql for sql in migrations.LEANER_FTS_SQL if "bytes >" in sql)
    assert sum("bytes >" in sql for sql in migrations.LEANER_FTS_SQL) == 5
    assert doc_slices.INDEXED_BYTES == 262144 == docwindows.WHOLE_DOC_BYTES
    small = add(conn, "# Small\n\nZebrafish swim here.", "Small", "https://docs.example/small")
    body = "".join(f"## Part {i}\n\nFiller words about nothing in particular, line {i}.\n\n"
                   for i in range(5000))
    big = add(conn, "# Big\n\n" + body + "Zebrafish at the end.", "Big", "https://docs.example/big")
    assert conn.execute("SELECT bytes FROM documents WHERE id = ?", (big,)).fetchone()[0] > 262144
    assert doc_slices.documents_with_word(conn, "zebrafish", [small, big]) == {big}
    assert doc_slices.documents_with_word(conn, "zeb", [small, big]) == set()  # short: whole word only
    assert doc_slices.documents_with_word(conn, "zebraf", [small, big]) == {big}
    # Both kinds are found by search (sections), and the index follows deletes.
    assert {x["id"] for x in search.search_documents(conn, "zebrafish")} == {small, big}
    with transaction(conn):
        conn.execute("DELETE FROM documents WHERE id = ?", (big,))
    conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('integrity-check')")
    assert doc_slices.documents_with_word(conn, "zebrafish", [small, big]) == set()


def test_the_library_argument_limits_the_search(conn):
    mine = add(conn, "# Upsert\n\nUpsert rows by primary key.", "Upsert", "https://a.example/u",
               library_id="/simonw/sqlite-utils")
    versioned = add(conn, "# Upsert v3\n\nUpsert rows, old way.", "Upsert 3", "https://a.example/u3",
                    library_id="/simonw/sqlite-utils/v3.0")
    other = add(conn, "# Upsert\n\nUpsert documents.", "Upsert", "https://b.example/u",
                library_id="/mongodb/docs")
    with transaction(conn):
        upsert_library(conn, library_id="/simonw/sqlite-utils", title="sqlite-utils", origin="capture",
                       provenance="capture")
    everything = {x["id"] for x in search.search_documents(conn, "upsert")}
    assert everything == {mine, versioned, other}
    for name in ("/simonw/sqlite-utils", "/SIMONW/sqlite-utils/v3.0", "sqlite-utils"):
        assert {x["id"] for x in search.search_documents(conn, "upsert", library=name)} == {mine, versioned}, name
    assert search.search_documents(conn, "upsert", library="no-such-library") == []
    assert search.resolve_library(conn, "no-such-library") == []
    assert search.resolve_library(conn, "  ") is None
    # the substring fallback is scoped too
    assert [x["id"] for x in search.search_documents(conn, "=>", library="/mongodb/docs")] == []


def test_get_document_returns_one_section(conn):
    doc = add(conn, MD, "Guide", "https://docs.example/guide")
    hit = search.search_documents(conn, "launcher windows")[0]
    part = search.get_document(conn, doc, section=hit["section_id"])
    assert part is not None
    assert part["content"].startswith("### On Windows") and "launcher" in part["content"]
    assert part["section"] == "Guide > Install > On Windows"
    by_anchor = search.get_document(conn, doc, section="#install-it")
    assert by_anchor is not None
    assert by_anchor["content"].startswith("## Install") and by_anchor["anchor"] == "install-it"
    assert by_anchor["section_url"] == "https://docs.example/guide#install-it"
    assert search.get_document(conn, doc, section="nowhere") is None
    whole = search.get_document(conn, doc)
    assert whole is not None and whole["content"] == MD


def test_memhooks_search_library_and_show_section(conn, tmp_path):
    doc = add(conn, MD, "Guide", "https://docs.example/guide", library_id="/acme/guide")
    runner = CliRunner()
    out = runner.invoke(cli_main, ["search", "launcher", "--library", "/acme/guide", "--json"])
    assert out.exit_code == 0, out.output
    assert f'"id": {doc}' in out.output and "On Windows" in out.output
    out = runner.invoke(cli_main, ["search", "launcher", "--library", "/other/lib", "--json"])
    assert out.exit_code == 0 and '"count": 0' in out.output
    out = runner.invoke(cli_main, ["search", "launcher", "--library", "nobody-knows"])
    assert out.exit_code != 0 and "no known library" in out.output
    out = runner.invoke(cli_main, ["show", str(doc), "--section", "install-it", "--fenced"])
    assert out.exit_code == 0 and "pip install thing" in out.output and "Opening words" not in out.output


def test_a_store_file_opened_without_memhooks_still_reads(tmp_path, conn):
    """The triggers need memhooks' SQL functions to write; reading sections needs nothing."""
    add(conn, MD, "Guide", "https://docs.example/guide")
    path = Path(conn.execute("PRAGMA database_list").fetchone()[2])
    plain = sqlite3.connect(path)
    try:
        assert plain.execute("SELECT count(*) FROM sections").fetchone()[0] == 5
    finally:
        plain.close()


def test_serving_ranks_a_librarys_documents_by_their_best_section(conn):
    """More candidates than the serve decision reads: the long page whose one section answers
    the question is read (and served), not the short pages that repeat one of its words."""
    now = time.time()

    def docs(topic: str, text: str) -> int:
        with transaction(conn):
            doc_id, _ = upsert_document(conn, provenance="capture", project="/p", source="/acme/lib",
                                        source_tool="context7", content=text, library_id="/acme/lib",
                                        topic=topic, tool="query-docs", now=now)
            assert doc_id is not None
            upsert_tier2(conn, provenance="capture", library_id="/acme/lib", topic=topic,
                         document_id=doc_id, origin="capture", ttl_s=4 * 3600, now=now)
        return doc_id

    for i in range(6):
        docs(f"caching {i}", f"### Caching {i}\n\n" + "The cache is fast. " * 30)
    other = "\n\n".join(f"### Part {i}\n\n" + f"Unrelated words about topic {i}. " * 20 for i in range(60))
    right = docs("guide", f"{other}\n\n### Invalidation\n\nTo invalidate the cache, call purge().\n\n{other}")
    served = serve.decide(conn, "mcp__context7__query-docs",
                          {"libraryId": "/acme/lib", "query": "invalidate the cache"}, "/p", now)
    assert served is not None and served.doc_ids == [right]
    assert "call purge()" in served.text


def test_memhooks_reindex_derives_the_same_sections(tmp_path, conn):
    """Captured through the real hook, projected, then `reindex` from the journal."""
    import os
    import subprocess

    from memhooks.ingest.pipeline import ingest_pending, reindex

    root = Path(__file__).resolve().parent.parent
    db = str(tmp_path / "memhooks.db")
    for name in ("c7_query_docs", "webfetch", "exa_web_fetch"):
        payload = (root / "tests" / "fixtures" / "payloads" / f"{name}.json").read_bytes()
        proc = subprocess.run(["bash", str(root / "hooks" / "post-tool-use")], input=payload,
                              env={**os.environ, "MEMHOOKS_DB": db}, capture_output=True, timeout=30)
        assert proc.returncode == 0
    ingest_pending(conn, db)

    def by_content():
        return sorted(conn.execute(
            "SELECT d.content_hash, s.ord, s.start, s.length, s.headings, s.anchor FROM sections s"
            " JOIN documents d ON d.id = s.document_id").fetchall())

    before = by_content()
    assert len({row[0] for row in before}) >= 3  # (an EXA fetch may keep more than one page)
    reindex(conn, db)
    assert by_content() == before
    conn.execute("INSERT INTO sections_fts (sections_fts) VALUES ('integrity-check')")
