"""Showing recall results (standard library only).

The fence and the defuser live in memhooks.egress, the one renderer for stored text leaving
for an agent or a terminal; they are re-exported here for the callers that import them from
this module. What is here turns results (dicts from memhooks.recall.search and
memhooks.recall.libraries) into what is shown: citations, JSON with every stored field made
safe, and the markdown of `memhooks search/show` and the MCP tools, every stored field
through egress (`fence`, or `quote`/`token` outside it) and every answer through `egress.clean`.
"""

import time

from memhooks._jsonlite import loads_object
from memhooks.egress import (  # noqa: F401 - re-exported for callers of this module
    BEGIN_HEAD,
    DEFUSED,
    END_HEAD,
    REFERENCE_NOTE,
    WITHHELD,
    begin_line,
    clean,
    defuse,
    end_line,
    fence,
    fence_markers,
    is_marker,
    one_line,
    quote,
    safe_json,
    token,
)
from memhooks.names import checked_library_id

# ----------------------------------------------------------------------------- times

def iso_utc(epoch) -> str | None:
    """`2026-01-02T03:04:05Z`, or None when there is no time."""
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def when_utc(epoch: float) -> str:
    """`2026-01-02 03:04 UTC` (minutes), for a line a person or the agent reads."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


# ----------------------------------------------------------------------------- citations

def repo_of(library_id: str | None) -> tuple[str | None, str | None]:
    """`/owner/repo[/version]` or `/owner/repo@version` -> ("/owner/repo", "repo")."""
    lid = (library_id or "").strip().rstrip("/")
    if not lid.startswith("/"):
        return None, None
    parts = [p for p in lid.split("/") if p]
    if len(parts) < 2:
        return None, parts[0] if parts else None
    repo = parts[1].split("@", 1)[0]
    return f"/{parts[0]}/{repo}", repo


def citation(doc: dict, matched_first: bool = False) -> str:
    """How to cite a document.

    context7: `[<library>@<version> via context7]`, plus ` — matched /owner/repo`
    when the library was picked by the disambiguation fallback; exa:
    `[exa: <url>]`; WebFetch: `[web: <url>]`; WebSearch: `[web: search "<query>"]`; a declared
    docs source: `[<source>: <url or the call's key>]`.
    """
    tool = (doc.get("source_tool") or "").lower()
    url = doc.get("url")
    if tool == "context7":
        base, repo = repo_of(doc.get("library_id") or doc.get("source"))
        if doc.get("type") == "library-resolve" or not (base or repo):
            meta = loads_object(doc.get("metadata"))
            name = meta.get("library_name") or meta.get("query") or doc.get("title") or doc.get("source")
            label = token(name, 80)
        else:
            label = token(repo, 80) if repo else token(doc.get("title"), 80)
        version = doc.get("version")
        if version:
            label = f"{label}@{token(version, 40)}"
        tail = f" — matched {token(base, 200)}" if matched_first and base else ""
        return f"[{label} via context7{tail}]"
    if tool == "exa":
        return f"[exa: {token(url or doc.get('source'), 300)}]"
    if tool == "websearch" and not url:
        meta = loads_object(doc.get("metadata"))
        query = meta.get("query") or str(doc.get("source") or "").removeprefix("websearch:")
        return f"[web: search {quote(query, 120)}]"
    if tool not in ("webfetch", "websearch") and tool:
        # a declared docs source (memhooks.doc_sources): its name and the page or the call
        return f"[{token(tool, 40)}: {token(url or doc.get('source'), 300)}]"
    return f"[web: {token(url or doc.get('source'), 300)}]"


# ----------------------------------------------------------------------------- results

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
    return checked_library_id(value) or "(malformed library ID withheld)"


def _where(r: dict) -> str:
    if r.get("url"):
        return token(r["url"], 300)
    if r.get("library_id"):
        return token(r["library_id"], 200)
    return token(r.get("source"), 200)


def results_markdown(query: str, results: list[dict], *, person: bool = False) -> str:
    """Markdown for the agent (MCP), or for a person at the terminal (`memhooks search`)."""
    shown = quote(query, 120)
    if not (query or "").strip():
        if person:
            return "Empty query: nothing searched. Give some words, e.g. memhooks search 'useEffect cleanup'."
        return "Empty query: nothing searched. Pass words to look for in the cached documentation."
    if not results:
        if person:
            return (f'No cached documents match {shown}.\n'
                    "memhooks keeps what your agent fetched (Context7, Exa, WebFetch, WebSearch). "
                    "Try fewer or other words; `memhooks stats` shows what is stored, and "
                    "`memhooks import-transcripts` adds what past sessions fetched.")
        return (f'No cached documents match {shown}. The cache holds only documentation '
                "fetched earlier (Context7, Exa, WebFetch, WebSearch); look it up live instead.")
    how = {r["match"] for r in results}
    note = ""
    if how == {"substring"}:
        note = " (no word match; substring match over the newest documents)"
    elif how <= {"fts-any", "fts-prefix"} and "fts" not in how:
        note = " (no document has every word; ranked by any word)"
    elif "fts-any" in how:
        note = " (documents with every word first, then those with some)"
    lines = [f'{len(results)} cached document{"s" if len(results) != 1 else ""} for {shown}{note}.',
             REFERENCE_NOTE, ""]
    for n, r in enumerate(results, 1):
        lines.append(f"## {n}. {quote(r['title'])} (id {r['id']})")
        lines += _about(r, f"{r.get('bytes') or 0:,} bytes")
        lines += _section_line(r)
        lines.append(fence(r.get("snippet") or ""))
        lines.append("")
    lines.append("`memhooks show ID` prints a document's full text (`--section N` one section)." if person
                 else "Call get_document(id) for a document's full text, get_document(id, section=N) "
                      "for one section.")
    return clean("\n".join(lines))


def _reads(doc: dict) -> str:
    """How often a document was read: the agent's reads apart from a person's when known."""
    if "agent_reads" in doc or "user_reads" in doc:
        return (f"read by the agent {int(doc.get('agent_reads') or 0)}×, "
                f"by you {int(doc.get('user_reads') or 0)}×")
    return f"accessed {doc['access_count']}×"


def _about(doc: dict, size: str) -> list[str]:
    """The provenance lines shown above a result or a document."""
    facts = [f"{token(doc.get('source_tool'), 40)} · {token(doc.get('type'), 40)}",
             f"from: {_where(doc)}"]
    if doc.get("topic"):
        facts.append(f"topic: {quote(doc['topic'], 120)}")
    if doc.get("version"):
        facts.append(f"version: {token(doc['version'], 40)}")
    if str(doc.get("provenance") or "").startswith("team:"):
        facts.append(f"from the team store (team member {quote(doc['provenance'][5:], 64)})")
    return ["- " + " · ".join(facts),
            f"- captured {token(doc.get('created_at') or '?', 40)} · {_reads(doc)} · {size}",
            f"- cite as: {doc['citation']}"]


def _section_line(doc: dict) -> list[str]:
    """The section a result or a document part is: its heading path, id and URL."""
    if doc.get("section_id") is None:
        return []
    where = f" · {quote(doc['section_url'], 300)}" if doc.get("section_url") else ""
    return [f"- section {int(doc['section_id'])}: {quote(doc.get('section') or '(before the first heading)', 200)}"
            f"{where}"]


def document_markdown(doc: dict) -> str:
    lines = [f"# {quote(doc['title'])} (id {doc['id']})", REFERENCE_NOTE, ""]
    lines += _about(doc, f"{doc['total_chars']:,} characters")
    lines += _section_line(doc)
    if doc.get("capture_truncated"):
        lines.append("- the capture itself was cut at the size cap")
    lines.append("")
    lines.append(fence(doc["content"]))
    if doc.get("note"):
        lines.append(doc["note"])
    return clean("\n".join(lines))


def library_markdown(ans: dict) -> str:
    name = token(ans["name"], 120)
    if not ans["name"]:
        return "Empty library name."
    lines = []
    if ans["found"]:
        ver = f" (version {token(ans['version'], 40)})" if ans.get("version") else ""
        lines.append(f"{name} → {_lid(ans['library_id'])}{ver}")
        detail = [f"from {token(ans['origin'], 40)}", f"{token(ans['scope'], 40)} knowledge"]
        if ans.get("matched") and ans["matched"] not in ("exact",):
            detail.append(f"matched: {token(ans['matched'], 40)}")
        if ans.get("versioned_id"):
            detail.append(f"versioned ID: {_lid(ans['versioned_id'])}")
        lines.append("- " + " · ".join(detail))
        if ans.get("matched") == "first":
            lines.append(f"- picked by disambiguation (first result); cite as "
                         f"[{token(ans['name'], 120)} via context7 — matched {_lid(ans['library_id'])}]")
        if ans["known_versions"]:
            lines.append("- known versions: " + ", ".join(token(v, 40) for v in ans["known_versions"][:20]))
        if ans["cached_topics"]:
            lines.append("- cached docs (use get_document): " + "; ".join(
                f"{quote(t['topic'], 60)} → id {t['document_id']}{'' if t['fresh'] else ' (stale)'}"
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
                bits.append(quote(a["title"], 60))
            if a.get("benchmark_score") is not None:
                bits.append(f"benchmark {token(a['benchmark_score'], 20)}")
            if a.get("reputation"):
                bits.append(f"reputation {token(a['reputation'], 20)}")
            elif a.get("trust_score") is not None:
                bits.append(f"trust {token(a['trust_score'], 20)}")
            if a.get("versions"):
                bits.append("versions " + ", ".join(token(v, 30) for v in a["versions"][:5]))
            lines.append("- " + " · ".join(bits))
    return clean("\n".join(lines))
