"""Recall: search and read the cached documents (standard library only).

The logic behind `memhooks search/show` and the MCP tools `search_documents` and
`get_document`; usable without the mcp SDK. Results are dicts; memhooks.recall.render
turns them into markdown or safe JSON, and memhooks.recall.libraries answers `lookup_library`.

Search semantics
----------------
* Any text is a valid query. memhooks.recall.ranking turns it into FTS5 terms: words (runs
  of Unicode letters and digits), stop and question words dropped, identifiers (`db.atomic`,
  `@scope/name`, `get_model`) as phrases; each term an FTS5 string (`"` doubled). No user
  text ever reaches FTS5 as syntax, so `AND`, `OR`, `NEAR`, quotes, `*`, `^`, `:`,
  parentheses … are just words or separators.
* The unit ranked is a section (memhooks.sections: a document split at its headings), over
  `sections_fts` (porter stemming) with BM25 weights title > headings > body
  (queries.SECTION_WEIGHTS); a page's best section stands for it, so a result is a page
  with the section that found it (heading path, id, URL anchor).
* Sections holding every term first (pages holding every term as written, without
  stemming, before the others), then, when fewer than `limit` pages have them all, the best
  sections holding some terms, by BM25. An unscoped query matching more than `RANK_WINDOW`
  sections is ranked over its newest `RANK_WINDOW` (bounded latency for common words).
* `library`: a name or a Context7 ID (any version of it), resolved through tier1 and the
  known libraries; only that library's documents are searched.
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
from memhooks.names import split_library_id
from memhooks.recall import semantic
from memhooks.recall.ranking import Query
from memhooks.recall.render import citation, repo_of
from memhooks.store import queries
from memhooks.store.projections import storable_text
from memhooks.store.provenance import team_label
from memhooks.store.reads import note_documents

MAX_TOKENS = 32          # distinct tokens used from one query
RANK_WINDOW = 20000      # BM25 ranks at most the newest this-many matching sections
EXACT_CHARS = 64 * 1024  # of a hit section read for its words as written (order only)
SECTIONS_PER_PAGE = 4    # sections ranked per page asked for (a page's best section stands for it)
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

def _ranked(conn, match: str | None, limit: int, libraries, ) -> list[tuple[int, int, float]]:
    """BM25-ranked sections for an FTS5 query built by memhooks.recall.ranking."""
    if match is None:
        return []
    try:
        return queries.section_ranked(conn, match, limit, window=RANK_WINDOW, libraries=libraries)
    except sqlite3.OperationalError:
        # Cannot happen for queries built here; never let a query be an error.
        return []


def _exact_docs(conn, q: Query, hits: list[tuple[int, int, float]]) -> set[int]:
    """The pages among these section hits (sections holding every term, stemmed) one of whose
    hit sections holds every term as written: its words, an identifier's in order, in the
    page title, the heading path or the section text (a section is at most a few KiB; the
    last of a page cut into MAX_SECTIONS can be long, so EXACT_CHARS of it are read)."""
    if not q.terms or not hits:
        return set()
    wanted = [" " + " ".join(t) + " " for t in q.terms]
    holding: set[int] = set()
    for sid, d, _ in sorted(hits, key=lambda h: h[1]):  # by page: its text is decompressed once
        if d not in holding:
            fields = queries.section_fields(conn, sid)[:EXACT_CHARS]
            written = " " + " ".join(_WORD_RE.findall(fields.lower())) + " "
            if all(w in written for w in wanted):
                holding.add(d)
    return holding


def _section_search(conn, q: Query, limit: int, libraries) -> list[tuple[int, int, float, str, str]]:
    """Pages by their best section: (document id, section id, score, how, FTS query).

    Sections holding every term come first (`fts`), the pages whose text has every term as
    written (no stemming) before the others; then the best sections holding some of the
    terms, ranked by BM25 (`fts-any`: a section holding more of the query scores higher)."""
    wanted = limit * SECTIONS_PER_PAGE
    tiers: list[list[tuple[int, int, float, str, str]]] = []
    all_hits = _ranked(conn, q.all_words, wanted, libraries)
    if all_hits:
        exact = _exact_docs(conn, q, all_hits)
        tiers.append([(d, sid, sc, "fts", q.all_words or "") for sid, d, sc in all_hits if d in exact])
        tiers.append([(d, sid, sc, "fts", q.all_words or "") for sid, d, sc in all_hits if d not in exact])
    found = {d for _, d, _ in all_hits}
    if len(found) < limit and (len(q.terms) > 1 or q.identifiers):
        some = _ranked(conn, q.any_word, wanted, libraries)
        tiers.append([(d, sid, sc, "fts-any", q.any_word or "") for sid, d, sc in some])
        found |= {d for _, d, _ in some}
    if len(found) < limit:
        tiers.append([(d, sid, sc, "fts-prefix", q.prefixed or "")
                      for sid, d, sc in _ranked(conn, q.prefixed, wanted, libraries)])
    pages: dict[int, tuple[int, int, float, str, str]] = {}
    for tier in tiers:
        for hit in tier:
            if hit[0] not in pages:
                pages[hit[0]] = hit
            if len(pages) >= limit:
                return list(pages.values())
    return list(pages.values())


def _fts_snippet(conn, match: str, section_id: int) -> str | None:
    try:
        return queries.section_snippet(conn, match, section_id, SNIPPET_TOKENS)
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


HYBRID_DEPTH = 30  # BM25's pages reranked with the embedding (20 found fewer of the pages that help)


def _hybrid(conn, query: str, q: Query, limit: int, libraries) -> list:
    """BM25's pages reranked with the embedding (memhooks.recall.semantic.rerank): its rank,
    plus the cosine of the section that found each page. When BM25 finds fewer pages than
    asked for, the embedding's nearest pages compete too (a `semantic` match)."""
    depth = max(limit, HYBRID_DEPTH)
    bm25 = list(_section_search(conn, q, depth, libraries))
    cos = semantic.cosines(conn, query, [h[1] for h in bm25])
    near: list[tuple[int, int, float]] = []
    if len(bm25) < limit:
        allowed = queries.library_document_ids(conn, libraries) if libraries is not None else None
        near = semantic.nearest(conn, query, depth, allowed)
    by_doc = {h[0]: h for h in bm25}
    for doc, sid, score in near:
        by_doc.setdefault(doc, (doc, sid, -score, "semantic", ""))
    order = semantic.rerank([(h[0], h[1]) for h in bm25], near, cos)
    return [by_doc[d] for d in order[:limit]]


def resolve_library(conn, library: str | None, project: str = "") -> list[str] | None:
    """The unversioned library IDs (lower-case) a `library` argument names: a Context7 ID as
    written (`/org/repo`, any version of it), else a name through tier1 (this project's
    answer, then global knowledge) and the known libraries. None: no library asked for;
    []: a library nobody knows (nothing matches)."""
    if library is None or not str(library).strip():
        return None
    name = clean_text(str(library)).strip()[:300]
    if name.startswith("/"):
        parts = split_library_id(name.rstrip("/"))
        return [f"/{parts[0]}/{parts[1]}".lower()] if parts else []
    found: list[str] = []
    try:
        hit = queries.find_tier1(conn, name, project)
        if hit and hit.get("library_id") and hit.get("matched") not in ("first", "none", "error"):
            found.append(str(hit["library_id"]))
        known = queries.find_library(conn, name)
        if known:
            found.append(known)
    except sqlite3.Error:
        pass
    bases = []
    for lid in found:
        parts = split_library_id(lid)
        if parts:
            bases.append(f"/{parts[0]}/{parts[1]}".lower())
    return list(dict.fromkeys(bases))


def _section_fields(sec: dict | None, url: str | None) -> dict:
    if not sec:
        return {"section_id": None, "section": None, "anchor": None, "section_url": None}
    anchor = sec.get("anchor")
    base = (url or "").split("#", 1)[0]
    return {"section_id": sec["id"], "section": sec.get("headings") or None, "anchor": anchor,
            "section_url": f"{base}#{anchor}" if base and anchor else (base or None)}


def search_documents(conn, query: str | None, limit: int = 10, *, touch: bool = True,
                     now: float | None = None, origin: str = "agent", library: str | None = None,
                     project: str = "") -> list[dict]:
    """BM25-ranked documents for any text (see the module doc), each by its best section.
    `library`: only that library's documents (a name or a Context7 ID, see resolve_library).
    Never raises for odd input; an empty or whitespace-only query returns []."""
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
    libraries = resolve_library(conn, library, project)
    if libraries is not None and not libraries:
        return []
    q = Query(query)
    hits: list[tuple[int, int | None, float | None, str, str]] = []  # (doc, section, score, how, match)
    if q.terms:
        if semantic.available():
            hits = _hybrid(conn, query, q, limit, libraries)
        else:
            hits = list(_section_search(conn, q, limit, libraries))
    needle = None
    if not hits:
        needle = query.strip()[:LIKE_NEEDLE_MAX]
        hits = [(i, None, None, "substring", "") for i in
                queries.substring_ids(conn, needle, limit, LIKE_SCAN_CAP, libraries)]
    if not hits:
        return []
    ids = [h[0] for h in hits]
    docs = queries.documents_by_id(conn, ids)
    sections = queries.sections_by_id(conn, [h[1] for h in hits if h[1] is not None])
    matched = _first_matched(conn, {b for d in docs.values() for b in [repo_of(d.get("library_id"))[0]] if b})
    stamp = _touch(conn, [i for i in ids if i in docs], now, origin) if touch else None
    results = []
    for doc_id, section_id, score, how, match in hits:
        doc = docs.get(doc_id)
        if doc is None:
            continue  # deleted between the two reads
        sec = sections.get(section_id) if section_id is not None else None
        if (doc.get("bytes") or 0) <= WHOLE_DOC_CHARS:
            snippet = _text_head(conn, doc_id, WHOLE_DOC_CHARS + 1)  # short: the whole text, verbatim
        elif how == "substring":
            snippet = _substring_snippet(conn, doc_id, needle or "")
        elif how == "semantic" and sec is not None:
            text = queries.section_text(conn, sec["id"])
            snippet = text[:SNIPPET_CHARS] + (" …" if len(text) > SNIPPET_CHARS else "")
        elif sec is not None and (sec.get("length") or 0) <= WHOLE_DOC_CHARS:
            snippet = queries.section_text(conn, sec["id"])  # a short section: all of it
        else:  # an FTS hit: `match` is the query that found its section
            snippet = (_fts_snippet(conn, match, section_id) if match and section_id else None) \
                or _text_head(conn, doc_id)
        out = public(doc, matched)
        out.update(_section_fields(sec, doc.get("url")))
        if stamp is not None:
            out["access_count"] += 1
            out["last_accessed_epoch"] = stamp
        out["snippet"] = snippet
        out["score"] = None if score is None else round(-score, 4)
        out["match"] = how
        results.append(out)
    return results


# ----------------------------------------------------------------------------- get

def find_section(conn, doc_id: int, section) -> dict | None:
    """One of a document's sections, by its section id (from search_documents) or by its
    URL anchor; None when the document has no such section."""
    if section is None:
        return None
    rows = queries.document_sections(conn, doc_id)
    want = str(section).strip()
    if want.startswith("#"):
        want = want[1:]
    for row in rows:
        if str(row["id"]) == want:
            return row
    return next((row for row in rows if row.get("anchor") and row["anchor"] == want), None)


def get_document(conn, doc_id, max_chars: int | None = DEFAULT_MAX_CHARS, *, touch: bool = True,
                 now: float | None = None, origin: str = "agent", section=None) -> dict | None:
    """One document with its full text, cut at `max_chars` characters (a note
    says so); `max_chars` ≤ 0 means no cut. None when there is no such id, or (with
    `section`: a section id or URL anchor) when the document has no such section; then
    the text is that section's."""
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
    sec = None
    if section is not None and str(section).strip():
        sec = find_section(conn, doc_id, section)
        if sec is None:
            return None
        content = content[sec["start"]:sec["start"] + sec["length"]]
    base, _ = repo_of(doc.get("library_id"))
    out = public(doc, _first_matched(conn, {base} if base else set()))
    if sec is not None:
        out.update(_section_fields(sec, doc.get("url")))
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
