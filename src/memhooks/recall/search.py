"""Recall: search and read the cached documents (standard library only).

The logic behind `memhooks search/show` and the MCP tools `search_documents`,
`get_document` and `lookup_library`; usable without the mcp SDK.

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

import json
import re
import sqlite3
import time

from memhooks.recall.render import (  # noqa: F401 - re-exported (serve, CLI, MCP)
    FENCE_BEGIN,
    FENCE_END,
    REFERENCE_NOTE,
    fence,
    one_line,
    safe_json,
)

TITLE_WEIGHT = 10.0
BODY_WEIGHT = 1.0
MAX_TOKENS = 32          # distinct tokens used from one query
PREFIX_MIN_CHARS = 4     # shorter tokens are never prefix-matched
RANK_WINDOW = 2000       # BM25 ranks at most the newest this-many matches
MAX_LIMIT = 100          # results per search
LIKE_SCAN_CAP = 2000     # newest documents a substring search looks at
LIKE_NEEDLE_MAX = 200    # characters of the query used as a substring
SNIPPET_TOKENS = 64      # FTS5 snippet() size, in tokens (FTS5's maximum)
WHOLE_DOC_CHARS = 1200   # a document this short is its own snippet
SNIPPET_CHARS = 320      # substring-fallback snippet size, in characters
DEFAULT_MAX_CHARS = 20_000

_WORD_RE = re.compile(r"[^\W_]+")

_DOC_COLUMNS = (
    "id, title, source, source_tool, type, url, library_id, topic, version, created_at,"
    " created_at_epoch, access_count, last_accessed_epoch, bytes, project, metadata, truncated"
)


# ----------------------------------------------------------------------------- query building

def clean_text(text: str) -> str:
    """NULs and lone surrogates (which SQLite cannot bind) made harmless."""
    from memhooks.store.projections import storable_text

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


def fts_term(token: str, prefix: bool = False) -> str:
    """One token as a safe FTS5 string (`"` doubled), optionally prefix-matched."""
    quoted = '"' + token.replace('"', '""') + '"'
    return quoted + "*" if prefix else quoted


def build_fts_query(tokens: list[str], op: str = "AND", prefix: bool = False) -> str | None:
    """Tokens joined with AND/OR; with `prefix`, tokens of PREFIX_MIN_CHARS or more
    characters are prefix-matched (shorter prefixes expand to too many terms)."""
    if not tokens:
        return None
    if op not in ("AND", "OR"):
        raise ValueError(op)
    return f" {op} ".join(fts_term(t, prefix and len(t) >= PREFIX_MIN_CHARS) for t in tokens)


def _like_pattern(needle: str) -> str:
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# ----------------------------------------------------------------------------- citations

def _repo_of(library_id: str | None) -> tuple[str | None, str | None]:
    """`/owner/repo[/version]` or `/owner/repo@version` -> ("/owner/repo", "repo")."""
    lid = (library_id or "").strip().rstrip("/")
    if not lid.startswith("/"):
        return None, None
    parts = [p for p in lid.split("/") if p]
    if len(parts) < 2:
        return None, parts[0] if parts else None
    repo = parts[1].split("@", 1)[0]
    return f"/{parts[0]}/{repo}", repo


def _metadata(raw) -> dict:
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _first_matched(conn, base_ids: set[str]) -> set[str]:
    """Library IDs (lower-cased, unversioned) that a tier1 entry reached by the
    disambiguation fallback ("first" result, not an exact name match)."""
    if not base_ids:
        return set()
    found: set[str] = set()
    try:
        rows = conn.execute(
            "SELECT DISTINCT library_id FROM tier1 WHERE matched = 'first' AND library_id IS NOT NULL"
        ).fetchall()
    except sqlite3.Error:
        return found
    wanted = {b.lower() for b in base_ids}
    for (lid,) in rows:
        base, _ = _repo_of(lid)
        if base and base.lower() in wanted:
            found.add(base.lower())
    return found


def citation(doc: dict, matched_first: bool = False) -> str:
    """The seed's citation for a document.

    context7: `[<library>@<version> via context7]`, plus ` — matched /owner/repo`
    when the library was picked by the disambiguation fallback; exa:
    `[exa: <url>]`; WebFetch: `[web: <url>]`; WebSearch: `[web: search "<query>"]`.
    """
    tool = (doc.get("source_tool") or "").lower()
    url = doc.get("url")
    if tool == "context7":
        base, repo = _repo_of(doc.get("library_id") or doc.get("source"))
        if doc.get("type") == "library-resolve" or not (base or repo):
            meta = _metadata(doc.get("metadata"))
            name = meta.get("library_name") or meta.get("query") or doc.get("title") or doc.get("source")
            label = one_line(name, 80)
        else:
            label = one_line(repo, 80) if repo else one_line(doc.get("title"), 80)
        version = doc.get("version")
        if version:
            label = f"{label}@{one_line(version, 40)}"
        tail = f" — matched {one_line(base, 200)}" if matched_first and base else ""
        return f"[{label} via context7{tail}]"
    if tool == "exa":
        return f"[exa: {one_line(url or doc.get('source'), 300)}]"
    if tool == "websearch" and not url:
        meta = _metadata(doc.get("metadata"))
        query = meta.get("query") or str(doc.get("source") or "").removeprefix("websearch:")
        return f'[web: search "{one_line(query, 120)}"]'
    return f"[web: {one_line(url or doc.get('source'), 300)}]"


# ----------------------------------------------------------------------------- rows

def _row_dict(row) -> dict:
    keys = [k.strip() for k in _DOC_COLUMNS.split(",")]
    return dict(zip(keys, row))


def _public(doc: dict, matched: set[str]) -> dict:
    base, _ = _repo_of(doc.get("library_id"))
    meta = _metadata(doc.get("metadata"))
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
        "access_count": doc.get("access_count") or 0,
        "last_accessed_epoch": doc.get("last_accessed_epoch"),
        "bytes": doc.get("bytes"),
        "citation": citation(doc, bool(base and base.lower() in matched)),
    }
    return out


def _touch(conn, ids: list[int], now: float | None, origin: str = "agent") -> int:
    """Count one retrieval of each document (by the agent, or the user's own CLI).
    Returns the epoch written."""
    from memhooks.store.projections import touch_documents
    from memhooks.store.connect import transaction

    stamp = int(time.time() if now is None else now)
    if ids:
        with transaction(conn):
            touch_documents(conn, ids, now=stamp, origin=origin)
    return stamp


def _fetch_docs(conn, ids: list[int]) -> dict[int, dict]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT {_DOC_COLUMNS} FROM documents WHERE id IN ({marks})", ids  # noqa: S608
    ).fetchall()
    return {r[0]: _row_dict(r) for r in rows}


# ----------------------------------------------------------------------------- search

def _fts_ids(conn, match: str, limit: int) -> list[tuple[int, float]]:
    """BM25-ranked rowids for an FTS5 query built here.

    Ranking costs time per matching row, so a query that matches more than
    RANK_WINDOW documents (a common word) is ranked over its newest
    RANK_WINDOW matches only: FTS5 seeks to that rowid instead of scoring the
    whole doclist.
    """
    try:
        row = conn.execute(
            "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?"
            " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (match, RANK_WINDOW - 1),
        ).fetchone()
        floor = row[0] if row else None
        sql = ("SELECT rowid, bm25(documents_fts, ?, ?) AS score FROM documents_fts"
               " WHERE documents_fts MATCH ?")
        args: tuple = (TITLE_WEIGHT, BODY_WEIGHT, match)
        if floor is not None:
            sql += " AND rowid >= ?"
            args += (floor,)
        return conn.execute(sql + " ORDER BY score LIMIT ?", args + (limit,)).fetchall()
    except sqlite3.OperationalError:
        # Cannot happen for queries built here; never let a query be an error.
        return []


def _fts_search(conn, tokens: list[str], limit: int) -> tuple[list[tuple[int, float, str]], str | None]:
    """AND (exact words, then with prefixes when that found fewer than `limit`),
    then OR the same way when AND found nothing. Returns (hits, the FTS query used)."""
    prefixable = any(len(t) >= PREFIX_MIN_CHARS for t in tokens)
    ops = ["AND"] + (["OR"] if len(tokens) > 1 else [])
    for op in ops:
        how = "fts" if op == "AND" else "fts-any"
        match = build_fts_query(tokens, op)
        hits = _fts_ids(conn, match, limit)
        if len(hits) < limit and prefixable:
            wider = build_fts_query(tokens, op, prefix=True)
            more = _fts_ids(conn, wider, limit)
            if len(more) > len(hits):
                hits, match = more, wider
        if hits:
            return [(i, s, how) for i, s in hits], match
    return [], None


def _fts_snippet(conn, match: str, doc_id: int) -> str | None:
    try:
        row = conn.execute(
            "SELECT snippet(documents_fts, 1, '', '', ' … ', ?) FROM documents_fts"
            " WHERE documents_fts MATCH ? AND rowid = ?",
            (SNIPPET_TOKENS, match, doc_id),
        ).fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row and row[0] else None


def _head(conn, doc_id: int, chars: int = SNIPPET_CHARS) -> str:
    row = conn.execute("SELECT substr(content, 1, ?) FROM documents WHERE id = ?",
                       (chars, doc_id)).fetchone()
    text = (row[0] if row else "") or ""
    return text + (" …" if len(text) >= chars else "")


def _substring_ids(conn, needle: str, limit: int) -> list[int]:
    """Newest documents containing `needle` (SQLite's LIKE folds ASCII case
    only, so the lower-cased needle is tried as well)."""
    p, q = _like_pattern(needle), _like_pattern(needle.lower())
    cond = "(title LIKE :p ESCAPE '\\' OR content LIKE :p ESCAPE '\\')"
    title_first = "(title LIKE :p ESCAPE '\\')"
    if q != p:
        cond = f"({cond} OR title LIKE :q ESCAPE '\\' OR content LIKE :q ESCAPE '\\')"
        title_first = "(title LIKE :p ESCAPE '\\' OR title LIKE :q ESCAPE '\\')"
    rows = conn.execute(
        "SELECT id FROM (SELECT id, title, content FROM documents ORDER BY id DESC LIMIT :cap)"
        f" WHERE {cond} ORDER BY {title_first} DESC, id DESC LIMIT :limit",
        {"cap": LIKE_SCAN_CAP, "p": p, "q": q, "limit": limit},
    ).fetchall()
    return [r[0] for r in rows]


def _substring_snippet(conn, doc_id: int, needle: str) -> str:
    row = conn.execute("SELECT content FROM documents WHERE id = ?", (doc_id,)).fetchone()
    text = (row[0] if row else "") or ""
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
        hits = [(i, None, "substring") for i in _substring_ids(conn, needle, limit)]
    if not hits:
        return []
    ids = [h[0] for h in hits]
    docs = _fetch_docs(conn, ids)
    matched = _first_matched(conn, {b for d in docs.values() for b in [_repo_of(d.get("library_id"))[0]] if b})
    stamp = _touch(conn, [i for i in ids if i in docs], now, origin) if touch else None
    results = []
    for doc_id, score, how in hits:
        doc = docs.get(doc_id)
        if doc is None:
            continue  # deleted between the two reads
        if (doc.get("bytes") or 0) <= WHOLE_DOC_CHARS:
            snippet = _head(conn, doc_id, WHOLE_DOC_CHARS + 1)  # short: the whole text, verbatim
        elif how == "substring":
            snippet = _substring_snippet(conn, doc_id, needle or "")
        else:
            snippet = _fts_snippet(conn, match, doc_id) or _head(conn, doc_id)
        out = _public(doc, matched)
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
    row = conn.execute(f"SELECT {_DOC_COLUMNS}, content FROM documents WHERE id = ?",  # noqa: S608
                       (doc_id,)).fetchone()
    if row is None:
        return None
    doc = _row_dict(row[:-1])
    content = row[-1] or ""
    base, _ = _repo_of(doc.get("library_id"))
    out = _public(doc, _first_matched(conn, {base} if base else set()))
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
    out["metadata"] = _metadata(doc.get("metadata"))
    return out


# ----------------------------------------------------------------------------- libraries

def lookup_library(conn, name: str, project: str, *, alternatives: int = 8,
                   on_pending=None) -> dict:
    """tier1/global answer for a library name plus other candidate libraries."""
    from memhooks.recall.lc_cache import lookup
    from memhooks.names import lookup_keys

    name = (name or "").strip()
    answer: dict = {"name": name, "found": False, "library_id": None, "version": None,
                    "versioned_id": None, "origin": None, "matched": None, "scope": None,
                    "known_versions": [], "negative": None, "cached_topics": [],
                    "alternatives": []}
    if not name:
        return answer
    hit = lookup(conn, name, project, on_pending=on_pending)
    if hit:
        answer.update({k: hit.get(k) for k in ("library_id", "version", "versioned_id", "origin",
                                               "matched", "scope")})
        answer["found"] = True
    else:
        keys = lookup_keys(name)
        if keys:
            marks = ",".join("?" * len(keys))
            neg = conn.execute(
                f"SELECT project, expires_at FROM tier1 WHERE name_key IN ({marks})"  # noqa: S608
                " AND library_id IS NULL AND expires_at > ?"
                " ORDER BY (project = ?) DESC, resolved_at DESC LIMIT 1",
                (*keys, time.time(), project or ""),
            ).fetchone()
            if neg:
                answer["negative"] = {
                    "scope": "project" if neg[0] == (project or "") else "global",
                    "expires_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(neg[1])),
                }
    chosen = (answer["library_id"] or "").lower()
    if chosen:
        row = conn.execute("SELECT versions FROM libraries WHERE lower(library_id) = ?",
                           (chosen.rstrip("/"),)).fetchone()
        if row and row[0]:
            try:
                answer["known_versions"] = [v for v in json.loads(row[0]) if isinstance(v, str)]
            except ValueError:
                pass
        from memhooks.names import library_key

        answer["cached_topics"] = [
            {"topic": t, "document_id": d, "fresh": bool(f)}
            for t, d, f in conn.execute(
                "SELECT topic, document_id, expires_at > ? FROM tier2 WHERE library_key = ?"
                " ORDER BY fetched_at DESC LIMIT 20",
                (time.time(), library_key(answer["library_id"])),
            ).fetchall()
        ]
    answer["alternatives"] = _alternatives(conn, name, chosen, alternatives)
    return answer


def _alternatives(conn, name: str, exclude: str, limit: int) -> list[dict]:
    from memhooks.names import lookup_keys

    keys = lookup_keys(name)
    bare = list(dict.fromkeys(keys + [k.rsplit("/", 1)[-1] for k in keys]))
    if not bare:
        return []
    marks = ",".join("?" * len(bare))
    exact = f"(title_key IN ({marks}) OR tail_key IN ({marks}))"
    pattern = _like_pattern(name.strip().lower()[:100])
    rows = conn.execute(
        "SELECT library_id, title, description, code_snippets, reputation, trust_score,"
        f" benchmark_score, versions FROM libraries WHERE ({exact}"  # noqa: S608
        " OR lower(library_id) LIKE ? ESCAPE '\\' OR title_key LIKE ? ESCAPE '\\')"
        " AND lower(library_id) != ?"
        f" ORDER BY {exact} DESC, coalesce(benchmark_score, 0) DESC,"
        " coalesce(trust_score, 0) DESC, coalesce(code_snippets, 0) DESC LIMIT ?",
        (*bare, *bare, pattern, pattern, exclude, *bare, *bare, limit),
    ).fetchall()
    out = []
    for lid, title, desc, snippets, rep, trust, bench, versions in rows:
        try:
            vers = [v for v in json.loads(versions or "[]") if isinstance(v, str)]
        except ValueError:
            vers = []
        out.append({"library_id": lid, "title": title, "description": desc,
                    "code_snippets": snippets, "reputation": rep, "trust_score": trust,
                    "benchmark_score": bench, "versions": vers})
    return out


# ----------------------------------------------------------------------------- output

def fenced(result: dict) -> dict:
    """A result or document for JSON output: its captured text (snippet, content) fenced,
    every other captured string (title, URL, source, topic, metadata ...) one safe line."""
    out = {}
    for key, value in result.items():
        if key in ("snippet", "content"):
            out[key] = fence(value) if value is not None else None
        elif isinstance(value, str):
            out[key] = one_line(value, 300)
        elif isinstance(value, (dict, list)):
            out[key] = safe_json(value)
        else:
            out[key] = value
    return out


def _lid(value) -> str:
    """A library ID for display: itself when it has the Context7 shape, else withheld."""
    from memhooks.names import checked_library_id

    return checked_library_id(value) or "(malformed library ID withheld)"


def _when(epoch) -> str:
    if not epoch:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def _where(r: dict) -> str:
    if r.get("url"):
        return one_line(r["url"], 300)
    if r.get("library_id"):
        return one_line(r["library_id"], 200)
    return one_line(r.get("source"), 200)


def results_markdown(query: str, results: list[dict], *, person: bool = False) -> str:
    """Markdown for the agent (MCP), or for a person at the terminal (`memhooks search`)."""
    shown = one_line(query, 120)
    if not (query or "").strip():
        if person:
            return "Empty query: nothing searched. Give some words, e.g. memhooks search 'useEffect cleanup'."
        return "Empty query: nothing searched. Pass words to look for in the cached documentation."
    if not results:
        if person:
            return (f'No cached documents match "{shown}".\n'
                    "memhooks keeps what your agent fetched (Context7, Exa, WebFetch, WebSearch). "
                    "Try fewer or other words; `memhooks stats` shows what is stored, and "
                    "`memhooks import-transcripts` adds what past sessions fetched.")
        return (f'No cached documents match "{shown}". The cache holds only documentation '
                "fetched earlier (Context7, Exa, WebFetch, WebSearch); look it up live instead.")
    how = {r["match"] for r in results}
    note = ""
    if how == {"substring"}:
        note = " (no word match; substring match over the newest documents)"
    elif "fts-any" in how:
        note = " (no document has every word; ranked by any word)"
    lines = [f'{len(results)} cached document{"s" if len(results) != 1 else ""} for "{shown}"{note}.',
             REFERENCE_NOTE, ""]
    for n, r in enumerate(results, 1):
        lines.append(f"## {n}. {one_line(r['title'])} (id {r['id']})")
        lines += _about(r, f"{r.get('bytes') or 0:,} bytes")
        lines.append(fence(r.get("snippet") or ""))
        lines.append("")
    lines.append("`memhooks show ID` prints a document's full text." if person
                 else "Call get_document(id) for a document's full text.")
    return "\n".join(lines)


def _about(doc: dict, size: str) -> list[str]:
    """The provenance lines shown above a result or a document."""
    facts = [f"{one_line(doc.get('source_tool'), 40)} · {one_line(doc.get('type'), 40)}",
             f"from: {_where(doc)}"]
    if doc.get("topic"):
        facts.append(f"topic: {one_line(doc['topic'], 120)}")
    if doc.get("version"):
        facts.append(f"version: {one_line(doc['version'], 40)}")
    return ["- " + " · ".join(facts),
            f"- captured {one_line(doc.get('created_at') or '?', 40)} · accessed {doc['access_count']}× · {size}",
            f"- cite as: {doc['citation']}"]


def document_markdown(doc: dict) -> str:
    lines = [f"# {one_line(doc['title'])} (id {doc['id']})", REFERENCE_NOTE, ""]
    lines += _about(doc, f"{doc['total_chars']:,} characters")
    if doc.get("capture_truncated"):
        lines.append("- the capture itself was cut at the size cap")
    lines.append("")
    lines.append(fence(doc["content"]))
    if doc.get("note"):
        lines.append(doc["note"])
    return "\n".join(lines)


def library_markdown(ans: dict) -> str:
    name = one_line(ans["name"], 120)
    if not ans["name"]:
        return "Empty library name."
    lines = []
    if ans["found"]:
        ver = f" (version {one_line(ans['version'], 40)})" if ans.get("version") else ""
        lines.append(f"{name} → {_lid(ans['library_id'])}{ver}")
        detail = [f"from {one_line(ans['origin'], 40)}", f"{one_line(ans['scope'], 40)} knowledge"]
        if ans.get("matched") and ans["matched"] not in ("exact",):
            detail.append(f"matched: {one_line(ans['matched'], 40)}")
        if ans.get("versioned_id"):
            detail.append(f"versioned ID: {_lid(ans['versioned_id'])}")
        lines.append("- " + " · ".join(detail))
        if ans.get("matched") == "first":
            lines.append(f"- picked by disambiguation (first result); cite as "
                         f"[{name} via context7 — matched {_lid(ans['library_id'])}]")
        if ans["known_versions"]:
            lines.append("- known versions: " + ", ".join(one_line(v, 40) for v in ans["known_versions"][:20]))
        if ans["cached_topics"]:
            lines.append("- cached docs (use get_document): " + "; ".join(
                f"{one_line(t['topic'], 60)} → id {t['document_id']}{'' if t['fresh'] else ' (stale)'}"
                for t in ans["cached_topics"][:10]))
    elif ans.get("negative"):
        lines.append(f"{name}: known NOT to be in Context7 ({ans['negative']['scope']} negative entry, "
                     f"until {ans['negative']['expires_at']}). Skip resolve-library-id; use another source.")
    else:
        lines.append(f"{name}: no cached library ID. Resolve it live with Context7 resolve-library-id.")
    if ans["alternatives"]:
        lines.append("")
        lines.append("Other candidate libraries:")
        for a in ans["alternatives"]:
            bits = [_lid(a["library_id"])]
            if a.get("title"):
                bits.append(one_line(a["title"], 60))
            if a.get("benchmark_score") is not None:
                bits.append(f"benchmark {a['benchmark_score']}")
            if a.get("reputation"):
                bits.append(f"reputation {one_line(a['reputation'], 20)}")
            elif a.get("trust_score") is not None:
                bits.append(f"trust {a['trust_score']}")
            if a.get("versions"):
                bits.append("versions " + ", ".join(one_line(v, 30) for v in a["versions"][:5]))
            lines.append("- " + " · ".join(bits))
    return "\n".join(lines)
