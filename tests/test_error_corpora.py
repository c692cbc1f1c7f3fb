"""Errors are recognised by what a real answer looks like: every event of the error corpus
(Context7, EXA, WebFetch, WebSearch) yields no document, no tier2 entry and no library ID;
every real short document of the document corpus is still captured. One test per corpus
checks every row and names all the rows that fail at once."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

from memhooks.ingest.adapters import route


def _corpora():
    """The corpora as tests/fixtures/corpora/build.py makes them (built here, not stored)."""
    path = Path(__file__).resolve().parent / "fixtures" / "corpora" / "build.py"
    spec = importlib.util.spec_from_file_location("memhooks_test_corpora", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Through JSON, as a hook payload arrives.
    return json.loads(json.dumps(module.errors())), json.loads(json.dumps(module.documents()))


ERRORS, DOCUMENTS = _corpora()


def _captured(result) -> bool:
    return bool(result.documents or result.tier2 or result.libraries
                or any(t.library_id for t in result.tier1))


def _report(rows: list[str], total: int, what: str) -> str:
    return f"{len(rows)} of {total} {what}:\n" + "\n".join(rows)


def test_corpora_are_large_and_cover_every_source():
    assert len({(e["source"], e["text"]) for e in ERRORS}) >= 200
    assert {e["source"] for e in ERRORS} >= {"context7", "context7-resolve", "exa", "webfetch", "websearch"}
    assert {d["source"] for d in DOCUMENTS} >= {"context7", "context7-resolve", "exa", "webfetch", "websearch"}


def test_every_error_of_the_error_corpus_is_refused(capsys):
    failing: list[str] = []
    rejected: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for i, item in enumerate(ERRORS):
        result = route(item["event"])
        total[item["source"]] += 1
        if _captured(result) or not result.skip_reason:
            failing.append(f"  {i} {item['source']} {item['event']['tool_name']}: {item['text'][:120]!r}")
        else:
            rejected[item["source"]] += 1
    with capsys.disabled():
        print("\nerrors rejected: " + ", ".join(f"{s} {rejected[s]}/{total[s]}" for s in sorted(total)))
    assert not failing, _report(failing, len(ERRORS), "errors were captured as documents")


def test_every_short_document_of_the_document_corpus_is_kept(capsys):
    failing = []
    for i, item in enumerate(DOCUMENTS):
        result = route(item["event"])
        if not _captured(result):
            failing.append(f"  {i} {item['source']}: {result.skip_reason}: {item['text'][:120]!r}")
    with capsys.disabled():
        print(f"\nshort documents kept: {len(DOCUMENTS) - len(failing)}/{len(DOCUMENTS)}")
    assert not failing, _report(failing, len(DOCUMENTS), "short documents were refused")


def test_no_tier2_for_a_context7_error_even_with_a_heading():
    event = ERRORS[0]["event"]
    event = json.loads(json.dumps(event))
    event["tool_response"] = [{"type": "text", "text": "### Error\n\nRate limited or quota exceeded."}]
    assert not _captured(route(event))


def test_not_found_resolve_records_a_negative_entry_only():
    event = next(e["event"] for e in ERRORS if e["source"] == "context7-resolve")
    event = json.loads(json.dumps(event))
    event["tool_response"] = [{"type": "text", "text": "No libraries found matching the provided name."}]
    result = route(event)
    assert result.documents == [] and [t.library_id for t in result.tier1] == [None]
