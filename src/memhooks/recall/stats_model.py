"""The shape of `memhooks stats --json` (docs/stats-json.md), as pydantic models.

`check(report)` validates what memhooks.recall.stats.gather built and returns it as it is
(same keys, same order): a key that is missing, misspelt, undocumented or of the wrong type
is an error here instead of a silent change for the scripts that read the JSON. Cold path
only (pydantic).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Count = NonNegativeInt
Epoch = float | int | None


class FileRow(_Strict):
    name: str
    path: str
    bytes: Count


class Db(_Strict):
    path: str
    file_bytes: Count
    wal_bytes: Count
    total_bytes: Count
    files: list[FileRow]
    store_bytes: Count
    cap_bytes: Count
    frees_pages: bool
    cap_unmet: dict | None = None  # memhooks.store.prune.cap_unmet: why eviction cannot meet the cap


class ToolRow(_Strict):
    source_tool: str | None
    type: str | None
    count: Count
    bytes: Count


class Documents(_Strict):
    count: Count
    bytes: Count
    by_source_tool: list[ToolRow]


class Captures(_Strict):
    count: Count
    unique_documents: Count
    captured_bytes: Count
    unique_bytes: Count
    dedup_saved_bytes: int
    oldest_epoch: Epoch
    oldest: str | None
    newest_epoch: Epoch
    newest: str | None


class TopDocument(_Strict):
    id: int
    title: str | None
    source_tool: str | None
    type: str | None
    source: str | None
    access_count: Count
    agent_reads: Count
    user_reads: Count
    last_accessed_epoch: Epoch
    last_accessed: str | None


class Reads(_Strict):
    reads: Count
    documents_read: Count


class Access(_Strict):
    total: Count
    documents_accessed: Count
    top: list[TopDocument]
    agent: Reads
    user: Reads


class Tier(_Strict):
    total: Count
    fresh: Count
    negative: Count
    negative_fresh: Count
    hits: Count
    misses: Count
    hit_rate: float | None


class ByState(_Strict):
    pending: Count
    done: Count
    failed: Count
    skipped: Count


class Reason(_Strict):
    reason: str
    count: Count


class Events(_Strict):
    total: Count
    by_state: ByState
    skip_reasons: list[Reason]
    failure_reasons: list[Reason]


class _Served(_Strict):
    calls_avoided: Count
    bytes_served: Count
    tokens_served_est: Count
    tokens_saved_est: int


class ServedByTool(_Served):
    tool: str | None  # context7-resolve, context7-docs, webfetch, exa-fetch, or a docs source (ref, ...)


class ServedByLibrary(_Served):
    library_id: str


class ServedByDay(_Served):
    day: str


class Serving(_Strict):
    calls_avoided: Count
    bytes_served: Count
    tokens_served_est: Count
    tokens_saved_est: int
    insisted: Count
    by_tool: list[ServedByTool]
    by_library: list[ServedByLibrary]
    by_day: list[ServedByDay]


class _Fallback(_Strict):
    fallbacks: Count
    bytes: Count


class FallbackByTool(_Fallback):
    tool: str | None


class FallbackByLibrary(_Fallback):
    library_id: str


class FallbackByDay(_Fallback):
    day: str


class FallbackByReason(_Fallback):
    reason: str


class FallbackByField(_Fallback):
    field: str | None  # updatedToolOutput, updatedMCPToolOutput or additionalContext


class Fallbacks(_Strict):
    fallbacks: Count
    bytes: Count
    by_tool: list[FallbackByTool]
    by_library: list[FallbackByLibrary]
    by_day: list[FallbackByDay]
    by_reason: list[FallbackByReason]
    by_field: list[FallbackByField]


class Daily(_Strict):
    days: list[str]
    captures: list[Count]
    agent_reads: list[Count]
    user_reads: list[Count]
    calls_avoided: list[Count]


class ProviderRow(_Strict):
    provider: str  # context7 (the ctx7 CLI included), exa, web, ref, docfork, deepwiki, gitmcp, or a declared source
    calls: Count
    live: Count
    served: Count
    fallbacks: Count
    avoided: Count
    failed: Count
    rate_limited: Count
    last_failure: str | None
    last_failed_epoch: Epoch
    last_failed: str | None
    last_rate_limited_epoch: Epoch
    last_rate_limited: str | None


class Budget(_Strict):
    provider: Literal["context7"]
    known: bool
    limit: Count | None
    remaining: Count | None
    reset_epoch: Epoch
    reset: str | None
    reset_passed: bool
    policy: str | None
    retry_after_s: float | int | None
    status: Count | None
    seen_epoch: Epoch
    seen: str | None
    rate_limited_epoch: Epoch
    rate_limited: str | None
    rate_limited_by: Literal["api", "captured failure"] | None


class StatsReport(_Strict):
    schema_: Literal[1] = Field(alias="schema")  # `schema` would shadow a BaseModel method
    generated_at: str
    project: str | None
    db: Db
    documents: Documents
    captures: Captures
    access: Access
    tier1: Tier
    tier2: Tier
    events: Events
    serving: Serving
    fallbacks: Fallbacks
    daily: Daily
    providers: list[ProviderRow]
    budget: Budget


def check(report: dict) -> dict:
    """`report` itself once it has the documented shape; raises pydantic.ValidationError."""
    StatsReport.model_validate(report)
    return report
