"""Errors are recognised by what a real answer looks like: every event of the error corpus
(Context7, EXA, WebFetch, WebSearch) yields no document, no tier2 entry and no library ID;
every real short document of the document corpus is still captured."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from memhooks.ingest.adapters import route


def _corpora():
    """The corpora as tests/fixtures/corpora/build.py makes them (built here, not stored)."""
    import importlib.util

    path = Path(__file__).resolve().parent / "fixtures" / "corpora" / "build.py"
    spec = importlib.util.spec_from_file_location("memhooks_test_corpora", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Through JSON, as a hook payload arrives.
    return json.loads(json.dumps(module.errors())), json.loads(json.dumps(module.documents()))


ERRORS, DOCUMENTS = _corpora()


def _captured(result) -> bool:
    return bool(result.documents or result.tier2 or result.libraries
                or any(t.library_id for t in result.tier1))


def test_corpora_are_large_and_cover_every_source():
    assert len({(e["source"], e["text"]) for e in ERRORS}) >= 200
    assert {e["source"] for e in ERRORS} >= {"context7", "context7-resolve", "exa", "webfetch", "websearch"}
    assert {d["source"] for d in DOCUMENTS} >= {"context7", "context7-resolve", "exa", "webfetch", "websearch"}


@pytest.mark.parametrize("item", ERRORS, ids=[f"{i}-{e['source']}" for i, e in enumerate(ERRORS)])
def test_error_is_not_a_document(item):
    result = route(item["event"])
    assert not _captured(result), (item["text"], result)
    assert result.skip_reason


@pytest.mark.parametrize("item", DOCUMENTS, ids=[f"{i}-{d['source']}" for i, d in enumerate(DOCUMENTS)])
def test_short_document_is_kept(item):
    result = route(item["event"])
    assert _captured(result), (item["text"], result.skip_reason)


def test_rates(capsys):
    rejected = Counter()
    total = Counter()
    for e in ERRORS:
        total[e["source"]] += 1
        rejected[e["source"]] += not _captured(route(e["event"]))
    kept = sum(_captured(route(d["event"])) for d in DOCUMENTS)
    with capsys.disabled():
        print("\nerrors rejected: " + ", ".join(f"{s} {rejected[s]}/{total[s]}" for s in sorted(total))
              + f"; short documents kept: {kept}/{len(DOCUMENTS)}")
    assert rejected == total and kept == len(DOCUMENTS)


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
