"""Typed records produced by the adapters (pydantic v2).

Adapters turn one parsed hook event into an :class:`AdapterResult`. Ingestion
redacts and writes the records into the projections; nothing here touches SQL.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

# Values used in DocumentRecord.source_tool
SOURCE_TOOLS = ("context7", "exa", "webfetch", "websearch")
# Values used in DocumentRecord.type
DOC_TYPES = ("library-docs", "library-resolve", "web-page", "search-results", "code-context")


class DocumentRecord(BaseModel):
    """One storable text (docs body, web page, search result …)."""

    source: str  # library ID for context7 docs, URL for exa/web, the query for searches
    source_tool: str  # "context7" | "exa" | "webfetch" | "websearch"
    tool: str  # the tool name after routing, e.g. "query-docs", "web_search_exa", "WebFetch"
    title: str | None = None
    content: str
    type: str  # "library-docs" | "library-resolve" | "web-page" | "search-results" | "code-context"
    url: str | None = None
    library_id: str | None = None
    topic: str | None = None
    version: str | None = None  # from a pinned ID /org/repo/v1.2.3 or /org/repo@1.2.3
    metadata: dict[str, Any] = Field(default_factory=dict)


class LibraryRecord(BaseModel):
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


class Tier1Record(BaseModel):
    """name -> chosen library ID, from a captured resolve-library-id."""

    name: str  # tool_input.libraryName as the agent asked
    library_id: str | None  # None = not found (negative entry)
    matched: str  # "exact" | "first" | "none" (negative entry)
    versions: list[str] = Field(default_factory=list)
    title: str | None = None  # title of the chosen library (None for a negative entry)


class Tier2Record(BaseModel):
    """(library ID, topic) -> document, from a captured query-docs/get-library-docs."""

    library_id: str
    topic: str
    document_index: int = 0  # index into AdapterResult.documents


class AdapterResult(BaseModel):
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

    @property
    def empty(self) -> bool:
        return not (self.documents or self.libraries or self.tier1 or self.tier2)
