"""The adapters' records validate what they are built from (pydantic), not just hold it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from memhooks.ingest.adapters import route
from memhooks.ingest.records import (
    DOC_TYPES,
    SOURCE_TOOLS,
    AdapterResult,
    DocumentRecord,
    LibraryRecord,
    Tier1Record,
    Tier2Record,
)


def _loose(**fields: Any) -> dict[str, Any]:
    """Fields as an outside payload sends them: of any type, any name."""
    return fields


def doc(**over):
    fields = dict(source="/facebook/react", source_tool="context7", tool="query-docs",
                  content="useEffect runs after render.", type="library-docs")
    return DocumentRecord(**{**fields, **over})


def test_closed_vocabularies_are_checked():
    assert SOURCE_TOOLS == ("context7", "exa", "webfetch", "websearch")
    assert "library-docs" in DOC_TYPES and "code-context" in DOC_TYPES
    for tool in SOURCE_TOOLS:
        assert doc(source_tool=tool).source_tool == tool
    with pytest.raises(ValidationError):
        doc(source_tool="gopher")
    with pytest.raises(ValidationError):
        doc(type="poem")
    with pytest.raises(ValidationError):
        Tier1Record(**_loose(name="react", library_id="/facebook/react", matched="close enough"))


def test_unknown_fields_are_refused():
    with pytest.raises(ValidationError):
        doc(contents="a typo of content")
    with pytest.raises(ValidationError):
        LibraryRecord(**_loose(library_id="/a/b", title="B", snippets=3))


def test_a_negative_tier1_entry_is_exactly_one_without_an_id():
    assert Tier1Record(name="nope", library_id=None, matched="none").library_id is None
    with pytest.raises(ValidationError):
        Tier1Record(name="react", library_id=None, matched="exact")
    with pytest.raises(ValidationError):
        Tier1Record(name="react", library_id="/facebook/react", matched="none")


def test_tier2_points_at_a_document_of_its_result():
    ok = AdapterResult(documents=[doc()], tier2=[Tier2Record(library_id="/facebook/react", topic="hooks")])
    assert ok.tier2[0].document_index == 0
    with pytest.raises(ValidationError):
        AdapterResult(tier2=[Tier2Record(library_id="/facebook/react", topic="hooks")])
    with pytest.raises(ValidationError):
        Tier2Record(library_id="/facebook/react", topic="hooks", document_index=-1)


def test_routing_a_real_docs_answer_still_gives_valid_records():
    event = {"hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
             "tool_input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"},
             "tool_response": [{"type": "text", "text": "### useEffect\n\n" + "Cleanup runs before "
                                "the next effect and on unmount, so subscriptions end. " * 8}]}
    result = route(event)
    assert result.skip_reason is None, result.skip_reason
    assert result.documents and result.documents[0].type == "library-docs"
    assert result.tier2 and result.tier2[0].document_index < len(result.documents)
    assert AdapterResult.model_validate_json(result.model_dump_json()) == result
