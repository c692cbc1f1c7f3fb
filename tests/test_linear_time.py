"""Every regular expression that runs on captured text runs in linear time: each rule gets
its own worst cases at 2 MiB and must stay under a generous bound per MiB (the one kind of
timed assertion this suite allows); a hook fed every worst case at once exits 0 and
journals the event inside its timeout."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from conftest import db_rows, run_hook

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _adversarial import everything, seeds_for, variants
from memhooks import redact

MIB = 1 << 20
SIZE = 2 * MIB
BOUND_S_PER_MIB = 1.0


def _per_mib(fn, text) -> float:
    best = None
    for _ in range(2):  # best of two: a busy machine slows one run, not the shape
        start = time.perf_counter()
        fn(text)
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    assert best is not None
    return best / (len(text) / MIB)


def _worst_variant(fn, seeds, probe_size=32 * 1024) -> list[tuple[str, str]]:
    """The variants that cost most at a small size (three), rebuilt at 2 MiB."""
    scored = []
    for label, text in variants(seeds, probe_size):
        start = time.perf_counter()
        fn(text)
        scored.append((time.perf_counter() - start, label))
    scored.sort(reverse=True)
    top = {label for _t, label in scored[:3]}
    return [(label, text) for label, text in variants(seeds, SIZE) if label in top]


@pytest.mark.parametrize("index", range(len(redact.RULES)), ids=[r[0] for r in redact.RULES])
@pytest.mark.parametrize("kind", [str, bytes], ids=["text", "bytes"])
def test_each_redaction_rule_is_linear(index, kind):
    rx, repl = redact._rule(index, kind)

    def apply(text):
        data = text if kind is str else text.encode()
        return redact._sub(rx, repl, data)

    for label, text in _worst_variant(apply, seeds_for(redact.RULES[index])):
        assert _per_mib(apply, text) < BOUND_S_PER_MIB, label


def _event(tool_name, text, tool_input=None):
    return {"hook_event_name": "PostToolUse", "session_id": "s", "cwd": "/tmp",
            "tool_name": tool_name, "tool_input": tool_input or {"libraryId": "/a/b", "query": "q"},
            "tool_response": [{"type": "text", "text": text}]}


def _fill(unit, size=SIZE):
    return (unit * (size // len(unit) + 1))[:size]


ADAPTER_CASES = {
    # the old heading rule was cubic on this
    "heading-spaces": ("mcp__context7__query-docs", "### a" + " " * SIZE),
    "heading-spaces-hash": ("mcp__context7__query-docs", "### a" + " " * SIZE + "#"),
    "headings-repeated": ("mcp__context7__query-docs", _fill("### a  \n")),
    "legacy-title": ("mcp__context7__get-library-docs", "TITLE: a" + " " * SIZE + "b"),
    "resolve-field-spaces": ("mcp__context7__resolve-library-id", "- a" + " " * SIZE + "x"),
    "resolve-fields": ("mcp__context7__resolve-library-id", _fill("- Title" + " " * 50 + "\n")),
    "resolve-separators": ("mcp__context7__resolve-library-id", _fill("-" * 100 + " x\n")),
    "resolve-dashes": ("mcp__context7__resolve-library-id", "   " + "-" * SIZE + "x"),
    "error-words": ("mcp__context7__query-docs", _fill("error: rate limit ")),
    "exa-pages": ("mcp__exa__web_fetch_exa", _fill("# t\nURL: u\n")),
    "exa-fetch-errors": ("mcp__exa__web_fetch_exa", "Error fetching " + _fill("a:") + " x"),
    "exa-results": ("mcp__exa__web_search_exa", _fill("Title: a\nURL: b\n\n---\n\n")),
    "exa-keys": ("mcp__exa__web_search_exa", "Title: " + _fill("Title: ")),
    "persisted-note": ("mcp__context7__query-docs", "full output saved to" + " " * 7000),
    "json-deep": ("mcp__exa__web_search_advanced_exa", "[" * 100000 + "]" * 100000),
    "html-error": ("mcp__context7__query-docs", "<html>" + _fill("<h1>502 ")),
}


@pytest.mark.parametrize("case", sorted(ADAPTER_CASES))
def test_adapters_are_linear_on_hostile_text(case):
    from memhooks.ingest.adapters import route

    tool, text = ADAPTER_CASES[case]
    event = _event(tool, text)
    assert _per_mib(lambda _t: route(event), text) < BOUND_S_PER_MIB


@pytest.mark.parametrize("fn_name", ["c7_docs_error", "strong_error", "short_error", "webfetch_error",
                                     "c7_docs_shape", "family", "interstitial", "empty_fetch",
                                     "document_error"])
def test_error_checks_are_linear(fn_name):
    from memhooks import classify

    fn = getattr(classify, fn_name)
    for text in (_fill("error "), " " * SIZE, _fill("#"), "{" + _fill('"a":'), _fill("`"),
                 "<html>" + _fill("<"), _fill("\n"), "<title>Just a moment" + _fill("<title>"),
                 _fill("# Just a moment...\n"), _fill("URL: x\n"), _fill("cf_chl_ just a moment ")):
        assert _per_mib(fn, text) < BOUND_S_PER_MIB


@pytest.mark.parametrize("fn_name", ["line", "fence_like", "library_name", "admit_document"])
def test_admission_checks_are_linear(fn_name):
    from memhooks.store import admission

    def run(text):
        if fn_name == "admit_document":
            try:
                admission.admit_document(project="/p", source=text, source_tool="exa", content=text,
                                         title=text, url=text, topic=text, version=text,
                                         library_id=text, provenance="import")
            except admission.Refused:
                pass
        elif fn_name == "line":
            admission.line(text, 300)
        else:
            getattr(admission, fn_name)(text)

    for text in (_fill("a "), " " * SIZE, _fill("-"), _fill("\u2014 "), _fill("`"), _fill("\x00\n"),
                 _fill("reference only "), _fill("\u0440\u0435f "), "### T\n\n" + _fill("text ")):
        assert _per_mib(run, text) < BOUND_S_PER_MIB


def test_hook_with_every_worst_case_at_2_mib_journals_inside_its_timeout(store):
    text = everything(SIZE)
    payload = _event("mcp__context7__query-docs", text)
    start = time.perf_counter()
    r = run_hook("post-tool-use", json.dumps(payload), timeout=10,
                 env=dict(__import__("os").environ, MEMHOOKS_NO_SPAWN="1"))
    took = time.perf_counter() - start
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    journal = Path(store).parent / "journal.db"  # the journal may live in its own file
    [(size, state)] = db_rows(journal if journal.exists() else store, "SELECT bytes, state FROM events")
    assert size > SIZE and state == "pending"
    print(f"\nhook with a {size} byte adversarial payload: {took:.2f} s")
