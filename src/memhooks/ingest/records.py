"""Typed records produced by the adapters (pydantic v2).

Adapters turn one parsed hook event into an :class:`AdapterResult`. Ingestion
redacts and writes the records into the projections; nothing here touches SQL.

The records are validated as they are built from the captured text: the closed vocabularies
are ``Literal``s, unknown fields are refused, a tier1 entry's match agrees with its ID, and a
tier2 entry points at a document of its result.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memhooks.doc_sources import source_names

SourceTool = Literal["context7", "exa", "webfetch", "websearch"]
DocType = Literal["library-docs", "library-resolve", "web-page", "search-results", "code-context"]
# Values used in DocumentRecord.source_tool
SOURCE_TOOLS = get_args(SourceTool)
# Values used in DocumentRecord.type
DOC_TYPES = get_args(DocType)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentRecord(_Record):
    """One storable text (docs body, web page, search result …)."""

    source: str  # library ID for context7 docs, URL for exa/web, the query for searches,
    # the call's key for a declared source (memhooks.doc_sources.call_source)
    source_tool: str  # one of SOURCE_TOOLS, or the name of a declared source's row in effect
    tool: str  # the tool name after routing, e.g. "query-docs", "web_search_exa", "WebFetch"
    title: str | None = None
    content: str
    type: DocType
    url: str | None = None
    library_id: str | None = None
    topic: str | None = None
    version: str | None = None  # from a pinned ID /org/repo/v1.2.3 or /org/repo@1.2.3
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("source_tool")
    @classmethod
    def _known_source(cls, value: str) -> str:
        if value in SOURCE_TOOLS or value in source_names():
            return value
        raise ValueError(f"unknown source_tool {value[:40]!r}")


class LibraryRecord(_Record):
    """One Context7 library seen in a resolve-library-id result."""

    library_id: str
    title: str
    description: str | None = None
    code_snippets: int | None = None
    reputation: str | None = None  # "High" | "Medium" | "Low" | "Unknown" (4.x)
    trust_score: float | None = None  # legacy 1.x "- Trust Score: 9.2"
    benchmark_score: float | None = None
    versions: list[str] = Field(default_factory=list)
    source: str | None = None


class Tier1Record(_Record):
    """name -> chosen library ID, from a captured resolve-library-id."""

    name: str  # tool_input.libraryName as the agent asked
    library_id: str | None  # None = not found (negative entry)
    matched: Literal["exact", "first", "none"]  # "none": a negative entry
    versions: list[str] = Field(default_factory=list)
    title: str | None = None  # title of the chosen library (None for a negative entry)

    @model_validator(mode="after")
    def _negative_has_no_id(self):
        if (self.matched == "none") != (self.library_id is None):
            raise ValueError("a negative tier1 entry (matched 'none') is exactly one without an ID")
        return self


class Tier2Record(_Record):
    """(library ID, topic) -> document, from a captured query-docs/get-library-docs."""

    library_id: str
    topic: str
    document_index: int = Field(default=0, ge=0)  # index into AdapterResult.documents


class AdapterResult(_Record):
    documents: list[DocumentRecord] = Field(default_factory=list)
    libraries: list[LibraryRecord] = Field(default_factory=list)
    tier1: list[Tier1Record] = Field(default_factory=list)
    tier2: list[Tier2Record] = Field(default_factory=list)
    # set when the event yields nothing storable, e.g. "not a captured tool",
    # "context7 error: rate limited", "empty content", "tool failure"
    skip_reason: str | None = None
    # routing information (informational; ingestion may record it)
    server: str | None = None
    tool: str | None = None
    source_tool: str | None = None

    @model_validator(mode="after")
    def _tier2_points_at_a_document(self):
        for entry in self.tier2:
            if entry.document_index >= len(self.documents):
                raise ValueError(f"tier2 entry for {entry.library_id} names document "
                                 f"{entry.document_index} of {len(self.documents)}")
        return self

    @property
    def empty(self) -> bool:
        return not (self.documents or self.libraries or self.tier1 or self.tier2)
