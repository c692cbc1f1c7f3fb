"""Export and import of the store's knowledge as JSON Lines: documents, libraries, tier1.

One record a line, ``{"table": "documents" | "libraries" | "tier1", "row": {...}}``. Local
bookkeeping (row ids, access counts, the journal) is not exported. An import is outside text:
each record is validated (pydantic), redacted, and written with sqlite-utils in one
transaction; documents are keyed by ``content_hash``, libraries by ``library_id``, tier1 by
``(project, name_key)``, so importing the same file twice adds nothing. Cold path only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from memhooks.redact import redact_text
from memhooks.store.connect import transaction
from memhooks.store.projections import content_hash, storable_text

TABLES = ("documents", "libraries", "tier1")
KEYS = {"documents": ["content_hash"], "libraries": ["library_id"], "tier1": ["project", "name_key"]}
LOCAL_ONLY = {
    "documents": {"id", "access_count", "last_accessed_epoch", "observation_id", "memory_session_id"},
    "libraries": set(),
    "tier1": set(),
}
REDACTED = {"documents": ("source", "title", "content", "metadata", "url"),
            "libraries": ("title", "description", "source"), "tier1": ("name",)}


class _Row(BaseModel):
    model_config = ConfigDict(extra="allow")


class DocumentRow(_Row):
    project: str
    source: str
    source_tool: str
    content: str
    content_hash: str
    title: str | None = None
    url: str | None = None
    library_id: str | None = None


class LibraryRow(_Row):
    library_id: str
    id_key: str
    tail_key: str
    origin: str
    last_seen: float


class Tier1Row(_Row):
    project: str
    name_key: str
    origin: Literal["capture", "write", "warm-local", "warm-api"]
    resolved_at: float
    expires_at: float


class Record(BaseModel):
    table: Literal["documents", "libraries", "tier1"]
    row: dict


MODELS = {"documents": DocumentRow, "libraries": LibraryRow, "tier1": Tier1Row}


@dataclass
class ImportResult:
    read: int = 0
    added: dict = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    existing: dict = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    rejected: int = 0
    errors: list = field(default_factory=list)  # (line number, reason), the first few


def export_records(conn) -> Iterator[dict]:
    """Every exportable row, table by table, in a stable order."""
    # lazy: heavy optional dependency (sqlite-utils)
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    for table in TABLES:
        if not db[table].exists():
            continue
        order = ", ".join(KEYS[table])
        for row in db[table].rows_where(order_by=order):
            yield {"table": table, "row": {k: v for k, v in row.items() if k not in LOCAL_ONLY[table]}}


def export_lines(conn) -> Iterator[str]:
    for record in export_records(conn):
        yield json.dumps(record, ensure_ascii=False, sort_keys=True)


def _clean(table: str, row: dict, columns: set[str]) -> dict:
    row = {k: v for k, v in row.items() if k in columns and k not in LOCAL_ONLY[table]}
    for key, value in row.items():
        if isinstance(value, str):
            value = storable_text(value)
            row[key] = redact_text(value) if key in REDACTED[table] else value
    if table == "documents":
        # The hash is of the (redacted) text we keep, never taken on trust.
        row["content_hash"] = content_hash(row["content"])
        row["bytes"] = len(row["content"].encode("utf-8"))
    return row


def import_lines(conn, lines: Iterable[str], *, max_errors: int = 20) -> ImportResult:
    """Validate and write every record; bad lines are counted, never fatal."""
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    columns = {t: {c.name for c in db[t].columns} for t in TABLES}
    result = ImportResult()
    with transaction(conn):
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            result.read += 1
            try:
                record = Record.model_validate_json(line)
                MODELS[record.table].model_validate(record.row)
                row = _clean(record.table, record.row, columns[record.table])
            except (ValidationError, ValueError, KeyError) as exc:
                result.rejected += 1
                if len(result.errors) < max_errors:
                    result.errors.append((number, str(exc).splitlines()[0]))
                continue
            table = db[record.table]
            where = " AND ".join(f"[{k}] = ?" for k in KEYS[record.table])
            if table.count_where(where, [row[k] for k in KEYS[record.table]]):
                result.existing[record.table] += 1
                continue
            table.insert(row)
            result.added[record.table] += 1
    return result
