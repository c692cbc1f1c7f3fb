"""Context7 adapter: resolve-library-id, query-docs and legacy get-library-docs.

Text formats follow @upstash/context7-mcp (4.x ``formatSearchResults``: blocks of
``- Key: value`` lines joined by ``\\n----------\\n`` after ``Available
Libraries:``; optional ``**Note:**`` paragraph; 1.x had a longer header and
``- Trust Score: 9.2``). Error texts arrive as normal text and are recognised
here, precisely: only short bodies count as errors.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from memhooks import classify as errors
from memhooks.ingest.adapters.text import is_persisted_note, is_too_small, response_text, stripped_str
from memhooks.ingest.records import (
    AdapterResult,
    DocumentRecord,
    LibraryRecord,
    SourceTool,
    Tier1Record,
    Tier2Record,
)
from memhooks.names import pick_library
from memhooks.toolargs import context7_docs_args

SOURCE_TOOL: SourceTool = "context7"

# Every pattern here runs in linear time on hostile text: classes that cannot overlap,
# possessive repetition, or plain string operations instead (headings, fields).
_SEPARATOR_RE = re.compile(r"[ \t]*+-{3,}+\s*+")
_FIELD_KEY_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ()/-]*+")
_AT_VERSION_RE = re.compile(r"^(/[^/@\s]+/[^/@\s]+)@([^/@\s]+)$")

# Texts at most this long may be error bodies; longer texts never are.
_ERROR_MAX_CHARS = 2000
# Texts at most this long are searched anywhere for error phrases.
_ERROR_ANYWHERE_MAX_CHARS = 400

# (pattern anchored at the start of the stripped text, reason)
_ERROR_PREFIXES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), reason)
    for p, reason in (
        (r"rate limited or quota exceeded", "rate limited"),
        (r"(you (have been|are|were) )?rate[ -]?limited\b", "rate limited"),
        (r"rate[ -]?limit (exceeded|reached|hit)", "rate limited"),
        (r"(monthly |daily |usage )?quota (exceeded|reached)", "rate limited"),
        (r"too many requests", "rate limited"),
        (r"the library you are trying to access does not exist", "library does not exist"),
        (r"library \S+ (does not exist|not found|was not found)", "library does not exist"),
        (r"library not found", "library does not exist"),
        (r"documentation not found or not finalized", "documentation not found"),
        (r"no (code |info )?documentation available", "no documentation"),
        (r"no (content|context data) available", "no documentation"),
        (r"library \S+ has been redirected", "library redirected"),
        (r"(invalid|missing|expired|revoked) api key", "unauthorized"),
        (r"unauthori[sz]ed", "unauthorized"),
        (r"forbidden", "unauthorized"),
        (r"authentication (failed|required)", "unauthorized"),
        (r"request failed with status", "request failed"),
        (r"error (searching libraries|fetching library)", "request failed"),
        (r"context7 request (failed|cancelled)", "request failed"),
        (r"(internal )?server error", "request failed"),
        (r"no (documentation )?libraries found matching", "no libraries found"),
    )
)

# Searched anywhere, but only in very short texts.
_ERROR_ANYWHERE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), reason)
    for p, reason in (
        (r"rate[ -]?limit|quota exceeded|too many requests|\b429\b", "rate limited"),
        (r"invalid api key|unauthori[sz]ed|\b401\b|\b403\b", "unauthorized"),
        (r"does not exist|not found|\b404\b", "library does not exist"),
        (r"not finali[sz]ed|being processed|\b202\b", "documentation not found"),
    )
)

_NOT_FOUND_REASON = "no libraries found"


def error_reason(text: str) -> str | None:
    """Why *text* is a Context7 error body, or None when it is real content.

    Precise on purpose: a long docs body that mentions "rate limit" is content.
    """
    stripped = text.strip()
    if not stripped or len(stripped) > _ERROR_MAX_CHARS:
        return None
    # JSON error object from the API passed through: {"error": ..., "message": ...}
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and ("error" in obj or "message" in obj) and len(obj) <= 4:
            msg = " ".join(str(obj.get(k, "")) for k in ("error", "message"))
            return error_reason(msg) or "api error"
    if "context7-compatible library id:" in stripped.lower():
        return None  # a resolve result, whatever its descriptions say
    for candidate in (stripped, _after_error_word(stripped)):
        for pattern, reason in _ERROR_PREFIXES:
            if pattern.match(candidate):
                return reason
    if len(stripped) <= _ERROR_ANYWHERE_MAX_CHARS and not _looks_like_docs(stripped):
        for pattern, reason in _ERROR_ANYWHERE:
            if pattern.search(stripped):
                return reason
    return None


def _after_error_word(text: str) -> str:
    """"Error: Rate limited …" -> "Rate limited …"."""
    m = re.match(r"(?i)^[\s*_]*(?:error|context7(?: error)?|failed)[*_]*\s*[:\-—][*_]*\s*", text)
    return text[m.end():] if m else text


def _looks_like_docs(text: str) -> bool:
    return errors.c7_docs_shape(text) or "\nSource: " in text or "`" in text


def first_heading(text: str, marker: str = "### ") -> str | None:
    """Title of the first `### Title` line (closing `#`s dropped); no regex, linear."""
    pos = 0
    n = len(text)
    while pos < n:
        i = text.find(marker[:3], pos)
        if i < 0:
            return None
        if i == 0 or text[i - 1] == "\n":
            end = text.find("\n", i)
            line = text[i: end if end >= 0 else n]
            rest = line[3:]
            if rest[:1] in (" ", "\t"):
                title = rest.strip()
                if title.endswith("#"):
                    bare = title.rstrip("#")
                    if not bare or bare[-1] in " \t":
                        title = bare.strip()
                if title:
                    return title
        pos = i + 3
    return None


def _legacy_title(text: str) -> str | None:
    pos = 0
    while True:
        i = text.find("TITLE:", pos)
        if i < 0:
            return None
        if i == 0 or text[i - 1] == "\n":
            end = text.find("\n", i)
            title = text[i + 6: end if end >= 0 else len(text)].strip()
            if title:
                return title
        pos = i + 6


# ---------------------------------------------------------------- resolve

def parse_resolve(text: str) -> list[LibraryRecord]:
    """Every library block of a resolve-library-id text."""
    libraries: list[LibraryRecord] = []
    block: list[str] = []
    for line in text.splitlines() + ["----------"]:
        if _SEPARATOR_RE.fullmatch(line):
            lib = _parse_block(block)
            if lib is not None:
                libraries.append(lib)
            block = []
        else:
            block.append(line)
    return libraries


def _parse_block(lines: list[str]) -> LibraryRecord | None:
    fields: dict[str, str] = {}
    for line in lines:
        field = _field(line)
        if field:
            fields.setdefault(field[0], field[1])
    lib_id = fields.get("context7-compatible library id") or fields.get("context7 compatible library id")
    if not lib_id or not lib_id.startswith("/"):
        return None
    lib_id = lib_id.split()[0]
    title = fields.get("title") or lib_id.rstrip("/").rsplit("/", 1)[-1]
    trust_raw = fields.get("trust score")
    trust = _float(trust_raw)
    reputation = fields.get("source reputation")
    if trust_raw and trust is None and not reputation:
        reputation = trust_raw  # some forks print a label there
    versions_raw = fields.get("versions") or ""
    versions = [v.strip() for v in versions_raw.split(",") if v.strip()]
    return LibraryRecord(
        library_id=lib_id,
        title=title,
        description=_none_if_placeholder(fields.get("description")),
        code_snippets=_int(fields.get("code snippets")),
        reputation=reputation or None,
        trust_score=trust,
        benchmark_score=_float(fields.get("benchmark score")),
        versions=versions,
        source=fields.get("source") or None,
    )


def _field(line: str) -> tuple[str, str] | None:
    """`- Key: value` -> (key lower-cased, value), or None. Linear: string operations."""
    s = line.lstrip()
    if not s.startswith("-") or s[1:2] not in (" ", "\t"):
        return None
    key, sep, value = s[1:].partition(":")
    key = key.strip()
    if not sep or not key or not _FIELD_KEY_RE.fullmatch(key):
        return None
    return key.lower(), value.strip()


def _none_if_placeholder(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "-1", "undefined", "null") else value


def _int(value: str | None) -> int | None:
    if not value:
        return None
    cleaned = value.replace(",", "").replace("_", "").strip()
    try:
        n = int(float(cleaned))
    except ValueError:
        return None
    return None if n < 0 else n


def _float(value: str | None) -> float | None:
    if not value:
        return None
    try:
        f = float(value.replace(",", "").strip())
    except ValueError:
        return None
    return None if f != f or f < 0 else f  # NaN / -1 sentinels


def choose_library(name: str, libraries: list[LibraryRecord]
                   ) -> tuple[LibraryRecord, Literal["exact", "first"]] | None:
    """The disambiguation rule (names.pick_library): exact title or ID tail, else first."""
    picked = pick_library(name, [(lib.library_id, lib.title) for lib in libraries])
    if picked is None:
        return None
    return libraries[picked[0]], picked[1]


def _adapt_resolve(tool: str, tool_input: dict, text: str) -> AdapterResult:
    name = stripped_str(tool_input.get("libraryName")) or stripped_str(tool_input.get("library_name"))
    query = stripped_str(tool_input.get("query"))
    reason = error_reason(text)
    if reason == _NOT_FOUND_REASON or (reason is None and _is_not_found(text)):
        if not name:
            return AdapterResult(skip_reason="context7: no libraries found")
        return AdapterResult(tier1=[Tier1Record(name=name, library_id=None, matched="none")])
    if reason is not None:
        return AdapterResult(skip_reason=f"context7 error: {reason}")
    libraries = parse_resolve(text)
    if not libraries:
        if is_too_small(text):
            return AdapterResult(skip_reason="empty content")
        return AdapterResult(skip_reason="context7: unrecognised resolve output")
    result = AdapterResult(libraries=libraries)
    label = name or query or libraries[0].title
    result.documents.append(
        DocumentRecord(
            source=f"resolve:{label}",
            source_tool=SOURCE_TOOL,
            tool=tool,
            title=f"Context7 libraries for {label}",
            content=text,
            type="library-resolve",
            topic=query or None,
            metadata={
                k: v
                for k, v in (
                    ("library_name", name),
                    ("query", query),
                    ("results", len(libraries)),
                    ("library_ids", [lib.library_id for lib in libraries]),
                )
                if v
            },
        )
    )
    if name:
        chosen = choose_library(name, libraries)
        if chosen is not None:
            lib, matched = chosen
            result.tier1.append(
                Tier1Record(
                    name=name,
                    library_id=lib.library_id,
                    matched=matched,
                    versions=list(lib.versions),
                    title=lib.title,
                )
            )
    return result


def _is_not_found(text: str) -> bool:
    stripped = text.strip()
    if len(stripped) > _ERROR_MAX_CHARS:
        return False
    # "Available Libraries:" header with no result blocks (1.x empty search)
    return stripped.lower().startswith("available libraries") and not parse_resolve(stripped) and (
        "context7-compatible library id:" not in stripped.lower()
    )


# ---------------------------------------------------------------- docs

def parse_version(library_id: str) -> str | None:
    """Version pinned in an ID: ``/org/repo/v1.2.3`` or ``/org/repo@1.2.3``."""
    lid = library_id.strip()
    m = _AT_VERSION_RE.match(lid.rstrip("/"))
    if m:
        return m.group(2)
    parts = [p for p in lid.strip("/").split("/") if p]
    if lid.startswith("/") and len(parts) == 3:
        return parts[2]
    return None


def docs_title(text: str, library_id: str, topic: str) -> str:
    for title in (first_heading(text), _legacy_title(text)):
        if title:
            return title[:300]
    return f"{library_id} — {topic}" if topic else library_id


def _adapt_docs(tool: str, tool_input: dict, text: str) -> AdapterResult:
    # the spelling the server acts on (its argument aliases resolved), as serving reads it
    library_id, topic = context7_docs_args(tool, tool_input)
    reason = error_reason(text)
    if reason is not None:
        return AdapterResult(skip_reason=f"context7 error: {reason}")
    if is_too_small(text):
        return AdapterResult(skip_reason="empty content")
    reason = errors.c7_docs_error(text)
    if reason is not None:
        return AdapterResult(skip_reason=f"context7 error: {reason}")
    if not library_id:
        return AdapterResult(skip_reason="context7: missing library id")
    metadata: dict[str, Any] = {"query": topic} if topic else {}
    for extra in ("tokens", "page", "mode"):
        value = tool_input.get(extra)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            metadata[extra] = value
    doc = DocumentRecord(
        source=library_id,
        source_tool=SOURCE_TOOL,
        tool=tool,
        title=docs_title(text, library_id, topic),
        content=text,
        type="library-docs",
        library_id=library_id,
        topic=topic,
        version=parse_version(library_id),
        metadata=metadata,
    )
    return AdapterResult(
        documents=[doc],
        tier2=[Tier2Record(library_id=library_id, topic=topic, document_index=0)],
    )


# ---------------------------------------------------------------- entry

def adapt(tool: str, tool_input: dict, tool_response: Any) -> AdapterResult:
    """Context7 PostToolUse event (already routed) -> records."""
    text = response_text(tool_response)
    if is_persisted_note(text):
        return AdapterResult(skip_reason="output persisted to file")
    if tool == "resolve-library-id":
        if not text.strip():
            return AdapterResult(skip_reason="empty content")
        return _adapt_resolve(tool, tool_input, text)
    if tool in ("query-docs", "get-library-docs"):
        if not text.strip():
            return AdapterResult(skip_reason="empty content")
        return _adapt_docs(tool, tool_input, text)
    return AdapterResult(skip_reason="not a captured tool")


