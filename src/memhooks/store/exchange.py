"""Export and import of the store's knowledge as JSON Lines: documents, libraries, tier1.

One record a line, ``{"table": "documents" | "libraries" | "tier1", "row": {...}}``. Local
bookkeeping (row ids, access counts, the journal) is not exported. An import is outside text:
each record is validated (pydantic), then written by the projection writers with provenance
``import``, so it passes admission like every other door (memhooks.store.admission: grammar,
redaction of every column, the error classifier, the size cap, timestamps clamped to now, the
content_hash checked against the content sent and recomputed, ``bytes`` recomputed). A
refused record is counted as rejected with its reason; the other records of the file still
go in, in one transaction. Documents are keyed by ``content_hash``, libraries by
``library_id``, tier1 by ``(project, name_key)``, so importing the same file twice adds
nothing. Cold path only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import sqlite_utils
from pydantic import BaseModel, ConfigDict, ValidationError

from memhooks.names import normalize
from memhooks.store.admission import Refused
from memhooks.store.bodies import document_text
from memhooks.store.connect import transaction
from memhooks.store.projections import upsert_document, upsert_library, upsert_tier1

TABLES = ("documents", "libraries", "tier1")
KEYS = {"documents": ["content_hash"], "libraries": ["library_id"], "tier1": ["project", "name_key"]}
LOCAL_ONLY = {
    "documents": {"id", "access_count", "last_accessed_epoch", "observation_id", "memory_session_id"},
    "libraries": set(),
    "tier1": set(),
}


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


MODELS: dict[str, type[_Row]] = {"documents": DocumentRow, "libraries": LibraryRow, "tier1": Tier1Row}


@dataclass
class ImportResult:
    read: int = 0
    added: dict = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    existing: dict = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    rejected: int = 0
    errors: list = field(default_factory=list)  # (line number, reason), the first few


def export_records(conn) -> Iterator[dict]:
    """Every exportable row, table by table, in a stable order."""
    db = sqlite_utils.Database(conn)
    for table in TABLES:
        if not db[table].exists():
            continue
        order = ", ".join(KEYS[table])
        for row in db[table].rows_where(order_by=order):
            if "body" in row:  # documents keep their text compressed; the file carries the text
                row["content"] = document_text(row.pop("body"))
            yield {"table": table, "row": {k: v for k, v in row.items() if k not in LOCAL_ONLY[table]}}


def export_lines(conn) -> Iterator[str]:
    for record in export_records(conn):
        yield json.dumps(record, ensure_ascii=False, sort_keys=True)


PROVENANCE = "import"


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _count(value) -> int | None:
    """A JSON number as a count (admission clamps it); infinities and NaN are none."""
    number = _number(value)
    return int(number) if number is not None and math.isfinite(number) else None


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def _import_document(conn, row: dict) -> bool:
    metadata = row.get("metadata")
    _doc_id, created = upsert_document(
        conn, project=_text(row.get("project")) or "", source=row["source"],
        source_tool=row["source_tool"], content=row["content"], title=_text(row.get("title")),
        type=_text(row.get("type")), url=_text(row.get("url")),
        library_id=_text(row.get("library_id")), topic=_text(row.get("topic")),
        version=_text(row.get("version")),
        metadata=metadata if isinstance(metadata, (str, dict)) else None,
        tool=_text(row.get("tool")), now=_number(row.get("created_at_epoch")),
        claimed_hash=row["content_hash"], provenance=PROVENANCE)
    return created


def _import_library(conn, row: dict) -> bool:
    if conn.execute("SELECT 1 FROM libraries WHERE library_id = ?",
                    (str(row["library_id"]).strip(),)).fetchone():
        return False
    versions = row.get("versions")
    if isinstance(versions, str):
        try:
            versions = json.loads(versions)
        except ValueError:
            versions = None
    upsert_library(
        conn, library_id=row["library_id"], title=_text(row.get("title")), origin=row["origin"],
        description=_text(row.get("description")), code_snippets=_count(row.get("code_snippets")),
        reputation=_text(row.get("reputation")), trust_score=_number(row.get("trust_score")),
        benchmark_score=_number(row.get("benchmark_score")),
        versions=versions if isinstance(versions, list) else None,
        source=_text(row.get("source")), now=_number(row.get("last_seen")),
        provenance=PROVENANCE)
    return True


def _import_tier1(conn, row: dict) -> bool:
    name = _text(row.get("name")) or row["name_key"]
    ecosystem = _text(row.get("ecosystem"))
    key = normalize(name, ecosystem)
    if conn.execute("SELECT 1 FROM tier1 WHERE project = ? AND name_key = ?",
                    (row["project"], key)).fetchone():
        return False
    resolved, expires = float(row["resolved_at"]), float(row["expires_at"])
    return upsert_tier1(
        conn, project=row["project"], name=name, library_id=_text(row.get("library_id")) or None,
        origin=row["origin"], ttl_s=expires - resolved, ecosystem=ecosystem,
        version=_text(row.get("version")), versioned_id=_text(row.get("versioned_id")),
        matched=_text(row.get("matched")), now=resolved, provenance=PROVENANCE)


IMPORTERS = {"documents": _import_document, "libraries": _import_library, "tier1": _import_tier1}


def import_lines(conn, lines: Iterable[str], *, max_errors: int = 20) -> ImportResult:
    """Validate, admit and write every record; bad or refused lines are counted, never fatal."""
    result = ImportResult()

    def reject(number: int, reason: str) -> None:
        result.rejected += 1
        if len(result.errors) < max_errors:
            result.errors.append((number, reason))

    with transaction(conn):
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            result.read += 1
            try:
                # the standard parser: a lone surrogate or a NUL escape reaches admission,
                # which makes it storable, instead of failing the line
                record = Record.model_validate(json.loads(line))
                MODELS[record.table].model_validate(record.row)
            except (ValidationError, ValueError, KeyError, RecursionError) as exc:
                reject(number, str(exc).splitlines()[0])
                continue
            try:
                added = IMPORTERS[record.table](conn, record.row)
            except Refused as exc:
                reject(number, f"refused: {exc.reason}")
                continue
            except (TypeError, ValueError, OverflowError) as exc:
                reject(number, f"{type(exc).__name__}: {exc}"[:200])
                continue
            if added:
                result.added[record.table] += 1
            else:
                result.existing[record.table] += 1
    return result
