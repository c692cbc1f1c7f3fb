"""The fallback's verdict, through the real PostToolUse hook (a subprocess, on a real store
filled by the capture hook and the ingester): a live answer is replaced only when the tool
reported a failure (PostToolUseFailure, an MCP result marked `isError`, its whole anchored
error forms). No-results answers that echo alarming words, short docs and prose mentioning
timeouts are answers and stay; each error family needs its whole form."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _verdict import FAILED_LIVE, FAMILY_TABLE, HONEST_LIVE, not_whole
from memhooks import classify
from test_fallback import blocks_text, capture, failed, post
from test_linear_time import BOUND_S_PER_MIB, SIZE, _fill, _per_mib


def _env() -> dict:
    return dict(os.environ, MEMHOOKS_NO_SPAWN="1")  # no detached ingest between the calls


def _live(payload: dict, text) -> dict | None:
    response = text if not isinstance(text, str) else [{"type": "text", "text": text}]
    return post(payload, env=_env(), tool_response=response)


def _reason(out: dict) -> str:
    value = out["updatedToolOutput"]
    head = (value if isinstance(value, str) else blocks_text(value)).splitlines()[0]
    assert head.startswith("[memhooks fallback] The live tool call failed (")
    return head.split("(", 1)[1].split(":", 1)[0]


def test_honest_answers_stay_and_failures_fall_back(store, capsys):
    p = capture(store, "c7_query_docs")
    kept = [text for text in HONEST_LIVE if _live(p, text) is None]
    caught = []
    for family, text in FAILED_LIVE:
        out = _live(p, text)
        if out is not None and _reason(out) == family:
            caught.append(text)
    # what the tool reported: isError on the result (an object, or a JSON string of one) and
    # PostToolUseFailure
    flagged = {"content": [{"type": "text", "text": "Something broke while fetching docs."}], "isError": True}
    for response in (flagged, json.dumps(flagged)):
        out = post(p, env=_env(), tool_response=response)
        if out is not None and _reason(out) == "tool error":
            caught.append("isError")
    out = post(failed(p, "MCP error -32603: upstream went away"), env=_env())
    if out is not None and "connection.disconnect()" in out["additionalContext"]:
        caught.append("PostToolUseFailure")
    failures = len(FAILED_LIVE) + 3
    with capsys.disabled():
        print(f"\nfallback confusion table: honest kept {len(kept)}/{len(HONEST_LIVE)} "
              f"(replaced {len(HONEST_LIVE) - len(kept)}); failures caught {len(caught)}/{failures} "
              f"(missed {failures - len(caught)})")
    assert kept == HONEST_LIVE
    assert len(caught) == failures, sorted(set(t for _f, t in FAILED_LIVE) - set(caught))


@pytest.mark.parametrize("family, form, phrase", FAMILY_TABLE, ids=[f"{r[0]}-{i}" for i, r in enumerate(FAMILY_TABLE)])
def test_each_family_needs_its_whole_anchored_form(family, form, phrase):
    """The pure verdict, for every row: the whole form (bare, or in the tools' wrappers) is a
    failure of its family; the phrase inside prose, inside an echoed query, under a heading,
    or the form with more after it or before it, is an answer."""
    assert classify.live_failure(form) == family
    for wrapper in ("Error: ", "MCP error -32603: "):
        assert classify.live_failure(wrapper + form) == family, wrapper + form
    for text in not_whole(form, phrase):
        assert classify.live_failure(text) is None, text


def test_the_family_table_through_the_hook(store):
    """The same table through the real hook: one whole form per family falls back, and its
    phrase in prose or in an echoed query never does."""
    p = capture(store, "c7_query_docs")
    wrong = []
    for family, form, phrase in FAMILY_TABLE:
        out = _live(p, form)
        if out is None or _reason(out) != family:
            wrong.append(("form not caught", form))
        for text in not_whole(form, phrase)[:3]:
            if _live(p, text) is not None:
                wrong.append(("not whole, replaced", text))
    assert wrong == []


# A query a no-results answer echoes, or prose around a family's form: never a failure.
_QUERY = st.text(st.characters(blacklist_categories=["Cs"]), max_size=200)
_FORMS = [form for _f, form, _p in FAMILY_TABLE]


@settings(max_examples=300, deadline=None)
@given(query=_QUERY, form=st.sampled_from(_FORMS))
def test_an_echoed_query_never_decides(query, form):
    for text in (f'No results for "{query} {form}"', f'No documentation found for the topic "{form} {query}"',
                 f"No content found for '{query}{form}'"):
        assert classify.live_failure(text) is None, text


@settings(max_examples=300, deadline=None)
@given(before=st.text(min_size=1, max_size=80).filter(lambda s: s.strip() and s.strip()[-1].isalnum()),
       form=st.sampled_from(_FORMS))
def test_a_form_inside_prose_is_an_answer(before, form):
    text = f"{before.strip()} said: {form} and the docs explain why."
    assert classify.live_failure(text) is None, text


@pytest.mark.parametrize("fn_name", ["live_failure", "error_form", "heading_error", "fetched_page_error",
                                     "status_family", "document_error"])
def test_the_verdict_is_linear(fn_name):
    """Each check of the verdict on its worst cases at 2 MiB, within the suite's one allowed
    bound per MiB (tests/test_linear_time.py)."""
    fn = getattr(classify, fn_name)
    for text in (_fill("Rate limited or quota exceeded. "), _fill("Error: "), _fill("# 502 Bad Gateway\n"),
                 "<title>" + _fill("502 "), _fill("<h1>"), "{" + _fill('"status": 500, '),
                 _fill("No results for \""), _fill("Sign in "), " " * SIZE):
        assert _per_mib(fn, text) < BOUND_S_PER_MIB, fn_name
