"""Library lookup: a name's Context7 library ID, with what else is known (standard library only).

The logic behind the MCP tool `lookup_library`: the tier1 answer (this project's first,
then global knowledge), a fresh "not in Context7" entry when there is one, the library's
known versions and cached topics, and other candidate libraries. Rendering is in
memhooks.recall.render (library_markdown).
"""

from __future__ import annotations

import time

from memhooks._jsonlite import loads_strings
from memhooks.names import library_key, lookup_keys
from memhooks.recall.lc_cache import lookup
from memhooks.recall.render import iso_utc
from memhooks.store import queries


def lookup_library(conn, name: str, project: str, *, alternatives: int = 8,
                   on_pending=None, now: float | None = None) -> dict:
    """tier1/global answer for a library name plus other candidate libraries."""
    now = time.time() if now is None else now
    name = (name or "").strip()
    answer: dict = {"name": name, "found": False, "library_id": None, "version": None,
                    "versioned_id": None, "origin": None, "matched": None, "scope": None,
                    "known_versions": [], "negative": None, "cached_topics": [],
                    "alternatives": []}
    if not name:
        return answer
    # The answer, and the library it falls back to, come from the one library ranking
    # (lc_cache.lookup -> find_tier1 -> find_library); the alternatives below rank the same way.
    hit = lookup(conn, name, project, on_pending=on_pending)
    if hit:
        answer.update({k: hit.get(k) for k in ("library_id", "version", "versioned_id", "origin",
                                               "matched", "scope")})
        answer["found"] = True
    else:
        neg = queries.negative_tier1(conn, lookup_keys(name), project, now)
        if neg is not None:
            answer["negative"] = {
                "scope": "project" if neg["project"] == (project or "") else "global",
                "expires_at": iso_utc(neg["expires_at"]),
            }
    chosen = (answer["library_id"] or "").lower()
    if chosen:
        answer["known_versions"] = loads_strings(queries.library_versions(conn, chosen))
        answer["cached_topics"] = [
            {"topic": r["topic"], "document_id": r["document_id"], "fresh": bool(r["fresh"])}
            for r in queries.cached_topics(conn, library_key(answer["library_id"]), now)
        ]
    answer["alternatives"] = candidates(conn, name, exclude=chosen, limit=alternatives)
    return answer


def candidates(conn, name: str, *, exclude: str = "", limit: int = 8) -> list[dict]:
    """Other libraries that could answer `name` (exact title or ID-tail matches first, then
    IDs and titles containing it), ranked as queries.rank_libraries ranks every library choice."""
    pattern = queries.like_pattern(name.strip().lower()[:100])
    return [{"library_id": r["library_id"], "title": r["title"], "description": r["description"],
             "code_snippets": r["code_snippets"], "reputation": r["reputation"],
             "trust_score": r["trust_score"], "benchmark_score": r["benchmark_score"],
             "versions": loads_strings(r["versions"])}
            for r in queries.rank_libraries(conn, name, pattern=pattern, exclude=exclude, limit=limit)]
