"""The `--json` outputs as typed results, and the one renderer that prints them.

In the spirit of pipx's `result.py`: a command builds its result, `emit(KIND, data)`
validates it against the model below and prints it; a key that is missing, misspelt, new or
of the wrong type fails here, in the tests (tests/test_result_contract.py runs every `--json`
command), instead of silently changing what scripts read. Nested rows whose shape another
module owns (a search hit, a scan's libraries) are typed as objects with their required keys.
Cold path only (pydantic).
"""

from __future__ import annotations

import json
from typing import Any

import click
from pydantic import BaseModel, ConfigDict, NonNegativeInt

from memhooks.recall.stats_model import StatsReport


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


Count = NonNegativeInt
Row = dict[str, Any]


class NoStore(BaseModel):
    """Any read command's answer on a machine without a store (exit 1); the command's own
    keys (a query, a name) come along."""
    model_config = ConfigDict(extra="allow")
    store: None
    error: str
    db: str


class CacheLookup(_Result):
    name: str
    hit: bool
    library_id: str | None = None
    version: str | None = None
    versioned_id: str | None = None
    origin: str | None = None
    matched: str | None = None
    scope: str | None = None


class CacheLookupDocs(_Result):
    library_id: str
    topic: str
    hit: bool
    document_id: int | None = None
    content: str | None = None


class CacheWrite(_Result):
    written: bool
    tier: str
    event_id: int


class ImportCounts(_Result):
    read: Count
    added: dict[str, Count]
    existing: dict[str, Count]
    rejected: Count
    errors: list[tuple[int, str]]


class SearchResults(_Result):
    query: str
    count: Count
    results: list[Row]


class Document(BaseModel):
    """`memhooks show --json`: the document's fields, its content fenced."""
    model_config = ConfigDict(extra="allow")
    id: int
    title: str | None
    content: str
    citation: str


class Scan(BaseModel):
    model_config = ConfigDict(extra="allow")
    project: str
    files: list[str]
    errors: list[Any]
    libraries: list[Row]
    complete: bool


class Warm(BaseModel):
    model_config = ConfigDict(extra="allow")
    project: str
    entries: list[Row]
    files: list[str]
    api_requests: Count
    rate_limited: bool
    rejected: Count


class DoctorCheck(_Result):
    name: str
    status: str
    detail: str


class TeamStatus(BaseModel):
    model_config = ConfigDict(extra="allow")
    configured: bool
    url: str | None
    local: Row


class TeamRun(BaseModel):
    """`team push --json` / `team pull --json`: the run's summary."""
    model_config = ConfigDict(extra="allow")


class Transcripts(BaseModel):
    model_config = ConfigDict(extra="allow")
    files: Count
    bytes: Count
    dry_run: bool
    sessions: Count
    tool_calls: dict[str, Count]
    events: dict[str, Count]


class Forget(_Result):
    dry_run: bool
    documents: list[Row]
    bytes: Count
    captures: Count
    tier2: Count
    events: Count
    spool_files: Count
    hashes: list[str]
    wal_truncated: bool | None
    team: str | None


class ConfigList(_Result):
    path: str
    settings: list[Row]
    unknown: list[str]


class SourceLimits(_Result):
    pages: Count
    page_bytes: Count
    total_bytes: Count
    budget_s: float
    timeout_s: float


class SourcePage(_Result):
    url: str
    outcome: str
    document_id: int | None
    bytes: Count
    downloaded: Count
    reason: str | None


class SourceRun(_Result):
    """`memhooks add --json` / `memhooks refresh --json`: what one run fetched and stored."""
    command: str
    roots: list[str]
    visited: Count
    outcomes: dict[str, Count]
    skipped: dict[str, Count]
    requests: Count
    bytes_downloaded: Count
    bytes_stored: Count
    limits: SourceLimits
    limits_hit: list[str]
    seconds: float
    pages: list[SourcePage]


class Source(_Result):
    url: str
    library_id: str | None
    version: str | None
    pages: Count
    documents: Count
    bytes: Count
    last_checked: float | None
    oldest_checked: float | None
    statuses: dict[str, Count]


class Sources(_Result):
    count: Count
    sources: list[Source]


MODELS: dict[str, type[BaseModel]] = {
    "no-store": NoStore,
    "stats": StatsReport,
    "cache lookup": CacheLookup,
    "cache lookup-docs": CacheLookupDocs,
    "cache write": CacheWrite,
    "import": ImportCounts,
    "search": SearchResults,
    "show": Document,
    "scan": Scan,
    "warm": Warm,
    "team status": TeamStatus,
    "team push": TeamRun,
    "team pull": TeamRun,
    "import-transcripts": Transcripts,
    "forget": Forget,
    "config list": ConfigList,
    "add": SourceRun,
    "refresh": SourceRun,
    "sources": Sources,
}
LISTS: dict[str, type[BaseModel]] = {"doctor": DoctorCheck}  # results that are a JSON list


def check(kind: str, data: Any) -> Any:
    """`data` validated against the model of `kind` (a list of them for list kinds), returned
    as it is (same keys, same order)."""
    if kind in LISTS:
        for item in data:
            LISTS[kind].model_validate(item)
    else:
        MODELS[kind].model_validate(data)
    return data


def emit(kind: str, data: Any) -> None:
    """The one renderer of `--json` results: validate, then print indented JSON."""
    click.echo(json.dumps(check(kind, data), indent=2, ensure_ascii=False, default=str))
