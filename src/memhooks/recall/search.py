"""Recall: search and read the cached documents (standard library only).

The logic behind `memhooks search/show` and the MCP tools `search_documents` and
`get_document`; usable without the mcp SDK. Results are dicts; memhooks.recall.render
turns them into markdown or safe JSON, and memhooks.recall.libraries answers `lookup_library`.

Search semantics
----------------
* Any text is a valid query. It is tokenised here (runs of Unicode letters and
  digits, the same notion of a word as FTS5's unicode61 tokenizer), at most
  `MAX_TOKENS` distinct tokens are kept, and each becomes an FTS5 string
  (`"` doubled). No user text ever reaches FTS5 as syntax, so `AND`, `OR`,
  `NEAR`, quotes, `*`, `^`, `:`, parentheses … are just words or separators.
* The tokens are ANDed as whole words; when that finds fewer than `limit`
  documents, tokens of 4+ characters are prefix-matched (`"tok"*`) too. When
  AND finds nothing and there are several tokens, they are ORed the same way.
  Ranking is BM25 with the title weighted 10× the body. A query matching more
  than `RANK_WINDOW` documents is ranked over its newest `RANK_WINDOW` matches
  (bounded latency for common words).
* When FTS finds nothing (or the query has no word characters, like `c++`'s
  `++` or `=>`), a bounded substring search runs: a parameterised, escaped
  `LIKE` over title and content of the newest `LIKE_SCAN_CAP` documents.
* An empty or whitespace-only query returns no results (it does not list
  recent documents: that would count accesses nobody made).
* Every returned document counts one access (access_count, last_accessed_epoch);
  the `access_count` in a result includes this retrieval.
"""

from __future__ import annotations

import re
import sqlite3
import time

from memhooks._jsonlite import loads_object
from memhooks.recall.render import citation, repo_of
from memhooks.store import queries
from memhooks.store.projections import storable_text
from memhooks.store.provenance import team_label
from memhooks.store.reads import note_documents

MAX_TOKENS = 32          # distinct tokens used from one query
RANK_WINDOW = 2000       # BM25 ranks at most the newest this-many matches
MAX_LIMIT = 100          # results per search
LIKE_SCAN_CAP = 2000     # newest documents a substring search looks at
LIKE_NEEDLE_MAX = 200    # characters of the query used as a substring
SNIPPET_TOKENS = 64      # FTS5 snippet() size, in tokens (FTS5's maximum)
WHOLE_DOC_CHARS = 1200   # a document this short is its own snippet
SNIPPET_CHARS = 320      # substring-fallback snippet size, in characters
DEFAULT_MAX_CHARS = 20_000

_WORD_RE = re.compile(r"[^\W_]+")

# ----------------------------------------------------------------------------- query building

def clean_text(text: str) -> str:
    """NULs and lone surrogates (which SQLite cannot bind) made harmless."""
    return storable_text(text).replace("\ufffd", " ")


def tokenize(query: str | None) -> list[str]:
    """Distinct word tokens of a query (case-insensitive), at most MAX_TOKENS."""
    seen: dict[str, str] = {}
    for tok in _WORD_RE.findall(query or ""):
        key = tok.casefold()
        if key not in seen:
            seen[key] = tok
            if len(seen) >= MAX_TOKENS:
                break
    return list(seen.values())


# ----------------------------------------------------------------------------- rows

def _first_matched(conn, base_ids: set[str]) -> set[str]:
    """Library IDs (lower-cased, unversioned) that a tier1 entry reached by the
    disambiguation fallback ("first" result, not an exact name match)."""
    if not base_ids:
        return set()
    try:
        ids = queries.first_matched_library_ids(conn)
    except sqlite3.Error:
        return set()
    wanted = {b.lower() for b in base_ids}
    return {base.lower() for base in (repo_of(lid)[0] for lid in ids) if base and base.lower() in wanted}


def public(doc: dict, matched: set[str] | frozenset[str] = frozenset()) -> dict:
    """A document's columns as a result: what it is, where it came from, how to cite it.
    `matched`: unversioned library IDs (lower-case) picked by disambiguation."""
    base, _ = repo_of(doc.get("library_id"))
    meta = loads_object(doc.get("metadata"))
    out = {
        "id": doc["id"],
        "title": doc.get("title") or doc.get("source"),
        "source": doc.get("source"),
        "source_tool": doc.get("source_tool"),
        "type": doc.get("type"),
        "url": doc.get("url"),
        "library_id": doc.get("library_id"),
        "topic": doc.get("topic") or meta.get("query"),
        "version": doc.get("version"),
        "created_at": doc.get("created_at"),
        "created_at_epoch": doc.get("created_at_epoch"),
        "access_count": doc.get("access_count") or 0,
        "last_accessed_epoch": doc.get("last_accessed_epoch"),
        "bytes": doc.get("bytes"),
        "citation": citation(doc, bool(base and base.lower() in matched)),
    }
    team = team_label(doc.get("provenance"))
    if team:
        out["provenance"] = team  # text from the team store says so, naming the member
    return out


def _touch(conn, ids: list[int], now: float | None, origin: str = "agent") -> int:
    """Count one retrieval of each document (by the agent, or the user's own CLI).
    Returns the epoch written."""
    stamp = int(time.time() if now is None else now)
    if ids:
        note_documents(queries.main_file(conn), queries.content_hashes(conn, ids), None, stamp, origin)
    return stamp


# ----------------------------------------------------------------------------- search

def _fts_ids(conn, match: str, limit: int) -> list[tuple[int, float]]:
    """BM25-ranked rowids for an FTS5 query built here (see queries.fts_ranked)."""
    try:
        return queries.fts_ranked(conn, match, limit, window=RANK_WINDOW)
    except sqlite3.OperationalError:
        # Cannot happen for queries built here; never let a query be an error.
        return []


def _fts_search(conn, tokens: list[str], limit: int) -> tuple[list[tuple[int, float | None, str]], str | None]:
    """AND (exact words, then with prefixes when that found fewer than `limit`),
    then OR the same way when AND found nothing. Returns (hits, the FTS query used)."""
    prefixable = any(len(t) >= queries.PREFIX_MIN_CHARS for t in tokens)
    ops = ["AND"] + (["OR"] if len(tokens) > 1 else [])
    for op in ops:
        how = "fts" if op == "AND" else "fts-any"
        match = queries.fts_query(tokens, op)
        if match is None:
            break  # no tokens
        hits = _fts_ids(conn, match, limit)
        if len(hits) < limit and prefixable:
            wider = queries.fts_query(tokens, op, prefix=True) or match
            more = _fts_ids(conn, wider, limit)
            if len(more) > len(hits):
                hits, match = more, wider
        if hits:
            return [(i, s, how) for i, s in hits], match
    return [], None


def _fts_snippet(conn, match: str, doc_id: int) -> str | None:
    try:
        return queries.fts_snippet(conn, match, doc_id, SNIPPET_TOKENS)
    except sqlite3.OperationalError:
        return None


def _text_head(conn, doc_id: int, chars: int = SNIPPET_CHARS) -> str:
    text = queries.document_head(conn, doc_id, chars)
    return text + (" …" if len(text) >= chars else "")


def _substring_snippet(conn, doc_id: int, needle: str) -> str:
    text = queries.document_content(conn, doc_id)
    pos = text.lower().find(needle.lower())
    if pos < 0:
        return text[:SNIPPET_CHARS] + (" …" if len(text) > SNIPPET_CHARS else "")
    start = max(0, pos - SNIPPET_CHARS // 2)
    end = min(len(text), pos + len(needle) + SNIPPET_CHARS // 2)
    return ("… " if start else "") + text[start:end] + (" …" if end < len(text) else "")


def search_documents(conn, query: str | None, limit: int = 10, *, touch: bool = True,
                     now: float | None = None, origin: str = "agent") -> list[dict]:
    """BM25-ranked documents for any text (see the module doc). Never raises for
    odd input; an empty or whitespace-only query returns []."""
    try:
        limit = int(limit)
    except (TypeError, ValueError):
        limit = 10
    limit = max(1, min(limit, MAX_LIMIT))
    if not isinstance(query, str):
        query = "" if query is None else str(query)
    query = clean_text(query)
    if not query.strip():
        return []
    tokens = tokenize(query)
    hits: list[tuple[int, float | None, str]] = []  # (id, score, how)
    match = None
    if tokens:
        hits, match = _fts_search(conn, tokens, limit)
    needle = None
    if not hits:
        needle = query.strip()[:LIKE_NEEDLE_MAX]
        hits = [(i, None, "substring") for i in queries.substring_ids(conn, needle, limit, LIKE_SCAN_CAP)]
    if not hits:
        return []
    ids = [h[0] for h in hits]
    docs = queries.documents_by_id(conn, ids)
    matched = _first_matched(conn, {b for d in docs.values() for b in [repo_of(d.get("library_id"))[0]] if b})
    stamp = _touch(conn, [i for i in ids if i in docs], now, origin) if touch else None
    results = []
    for doc_id, score, how in hits:
        doc = docs.get(doc_id)
        if doc is None:
            continue  # deleted between the two reads
        if (doc.get("bytes") or 0) <= WHOLE_DOC_CHARS:
            snippet = _text_head(conn, doc_id, WHOLE_DOC_CHARS + 1)  # short: the whole text, verbatim
        elif how == "substring":
            snippet = _substring_snippet(conn, doc_id, needle or "")
        else:  # an FTS hit: `match` is the query that found it
            snippet = (_fts_snippet(conn, match, doc_id) if match else None) or _text_head(conn, doc_id)
        out = public(doc, matched)
        if stamp is not None:
            out["access_count"] += 1
            out["last_accessed_epoch"] = stamp
        out["snippet"] = snippet
        out["score"] = None if score is None else round(-score, 4)
        out["match"] = how
        results.append(out)
    return results


# ----------------------------------------------------------------------------- get

def get_document(conn, doc_id, max_chars: int | None = DEFAULT_MAX_CHARS, *, touch: bool = True,
                 now: float | None = None, origin: str = "agent") -> dict | None:
    """One document with its full text, cut at `max_chars` characters (a note
    says so); `max_chars` ≤ 0 means no cut. None when there is no such id."""
    try:
        doc_id = int(str(doc_id).strip())
    except (TypeError, ValueError):
        return None
    if not -(2**63) <= doc_id < 2**63:
        return None
    doc = queries.document_with_content(conn, doc_id)
    if doc is None:
        return None
    content = doc.pop("content") or ""
    base, _ = repo_of(doc.get("library_id"))
    out = public(doc, _first_matched(conn, {base} if base else set()))
    if touch:
        stamp = _touch(conn, [doc_id], now, origin)
        out["access_count"] += 1
        out["last_accessed_epoch"] = stamp
    if max_chars is None:
        max_chars = DEFAULT_MAX_CHARS
    total = len(content)
    cut = 0 < max_chars < total
    out["content"] = content[:max_chars] if cut else content
    out["total_chars"] = total
    out["truncated"] = cut
    out["note"] = (f"[memhooks: showing the first {max_chars:,} of {total:,} characters; "
                   f"ask again with a larger max_chars for more]") if cut else None
    out["capture_truncated"] = bool(doc.get("truncated"))
    out["metadata"] = loads_object(doc.get("metadata"))
    return out
