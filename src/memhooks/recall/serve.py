"""PreToolUse: answer a repeated docs or page fetch from the store (standard library only).

`decide()` looks at one tool call and returns the text to serve, or None:

* Context7 `resolve-library-id`: a fresh tier1 answer for the name (not a
  "first result" guess): ID, title, versions, the installed version when known.
* Context7 `query-docs` / `get-library-docs`: captured docs of exactly that
  library ID (a versioned ID only by that version's docs; an unversioned ID by
  versioned docs only for the version the lockfile pins), fresh under the tier2
  TTL (pinned docs: `MEMHOOKS_SERVE_PINNED_TTL_S`). The library's documents are
  ranked as search ranks them (BM25 over their sections, memhooks.recall.ranking), cut into snippets (a large one only around the query's words:
  memhooks.recall.docwindows), and served only when a few snippets together contain
  every content word of the new query. The whole decision stops at its budget
  (memhooks.recall.budget) and then lets the call run.
  An unversioned ID the project's lockfile pins (memhooks.recall.pin) is answered by
  `serve_payload` as a call for the versioned ID.
* `WebFetch`: the same normalised URL and the same prompt, within the TTL.
* EXA `web_fetch_exa` / `crawling_exa`: every asked URL captured, within the TTL.
* A declared docs source whose row says `serve` (memhooks.doc_sources: Ref, Docfork,
  DeepWiki, GitMCP, the user's own rows): the same key, within the web TTL
  (memhooks.recall.serve_declared).

`serve_payload()` is what the hook (memhooks.entry.pre_tool_use) asks: the PreToolUse
object that denies the call with the served text as the reason (the CLI gives that text
to the model as the tool's result), or None, which lets the call run. An identical
call repeated within `MEMHOOKS_SERVE_INSIST_S` of a served one goes live.
"""

import os
import time
import zlib

from memhooks import doc_sources
from memhooks._jsonlite import dumps, loads_strings
from memhooks._jsonlite import loads as loads  # the JSON reader of the hook (tests read it here)
from memhooks.config import MAX_SERVE_STDIN, project_dir
from memhooks.gate import blocked
from memhooks.names import split_library_id
from memhooks.recall import coverage as cv
from memhooks.recall import docwindows
from memhooks.recall import pin as pinning
from memhooks.recall.budget import budget_deadline, connect_guarded, install, within
from memhooks.recall.ranking import Query
from memhooks.recall.render import when_utc
from memhooks.recall.serve_declared import answer_declared
from memhooks.recall.serve_pages import EXA_FETCH, answer_exa_fetch, answer_webfetch
from memhooks.recall.served import Served
from memhooks.recall.served import num as _num
from memhooks.recall.served import off as _off
from memhooks.recall.served import q as _q
from memhooks.recall.served import s as _s
from memhooks.store import provenance, queries, serve_log
from memhooks.store.connect import transaction
from memhooks.store.queries import content_hashes, find_tier1
from memhooks.store.reads import note_documents
from memhooks.store.sqlite_file import SCHEMA_VERSION
from memhooks.toolargs import context7_docs_args, with_docs_library_id
from memhooks.tools import parse_tool_name, server_has_word

MAX_STDIN = MAX_SERVE_STDIN
MAX_CANDIDATE_DOCS = 200   # newest library documents considered
TOP_DOCS = 4               # read after BM25 ranking
# No `json` or `re` on the decision path: together they are the largest imports of a hook
# run (`re` brings `enum`). JSON is read with the C scanner and strings are written with the
# C encoder (`_json`); names and IDs are checked with string methods. `re` is imported only
# when captured text has to be cut into snippets (memhooks.recall.coverage).
_C7_TOOLS = ("resolve-library-id", "query-docs", "get-library-docs")
SNIPPET_JOIN = "\n\n--------------------------------\n\n"


def _canon(value):
    """A stable, comparable form of a JSON value (dict keys sorted), for call keys."""
    if isinstance(value, dict):
        return ("d", tuple(sorted(((str(k), _canon(v)) for k, v in value.items()), key=lambda kv: kv[0])))
    if isinstance(value, list):
        return ("l", tuple(_canon(v) for v in value))
    return value


# ----------------------------------------------------------------------------- tools

def classify(tool_name, switches: bool = True) -> str | None:
    """'context7-resolve', 'context7-docs', 'webfetch', 'exa-fetch', 'declared' (a row of the
    docs sources' table that may be served, memhooks.doc_sources), or None (not served; with
    `switches`, also when MEMHOOKS_SERVE_CONTEXT7 / _EXA / _WEBFETCH / _SOURCES turn it off)."""
    if tool_name == "WebFetch":
        return None if switches and _off("MEMHOOKS_SERVE_WEBFETCH") else "webfetch"
    if not isinstance(tool_name, str) or len(tool_name) > 200:
        return None
    # The PreToolUse matcher (memhooks.tools.SERVE_MATCHER): a tool it can answer, on a server
    # named as for capture (context7 / exa a whole word of the name; plugin forms too).
    if not tool_name.startswith("mcp__"):
        return None

    server, tool = parse_tool_name(tool_name)
    if not server:
        return None
    if tool in _C7_TOOLS and server_has_word(server, "context7"):
        if switches and _off("MEMHOOKS_SERVE_CONTEXT7"):
            return None
        return "context7-resolve" if tool == "resolve-library-id" else "context7-docs"
    if tool in EXA_FETCH and server_has_word(server, "exa") and not (switches and _off("MEMHOOKS_SERVE_EXA")):
        return "exa-fetch"
    if tool in _C7_TOOLS or server_has_word(server, "context7") or server_has_word(server, "exa"):
        return None  # Context7's and EXA's other tools are never a declared source's
    row = doc_sources.find(server, tool)
    if row is not None and row.serve and not (switches and _off("MEMHOOKS_SERVE_SOURCES")):
        return "declared"
    return None


# ----------------------------------------------------------------------------- library IDs

def split_id(library_id: str) -> tuple[str, str | None] | None:
    """`/org/repo[/v|@v]` (leading and trailing slash optional) -> (lower-case base, version
    without a leading v) or None, by the one Context7 ID grammar (memhooks.names)."""
    lid = library_id if library_id.startswith("/") else "/" + library_id
    parts = split_library_id(lid[:-1] if lid.endswith("/") and len(lid) > 1 else lid)
    if parts is None:
        return None
    owner, repo, ver = parts
    return f"/{owner}/{repo}".lower(), (ver.lstrip("vV").lower() or None) if ver else None


def _keys(base: str, ver: str | None) -> list[str]:
    if ver is None:
        return [base]
    return [f"{base}{sep}{p}{ver}" for sep in ("/", "@") for p in ("", "v")]


def pinned_version(conn, project: str, base: str) -> str | None:
    """The version the project's lockfile pins for this library (from warm tier1 entries)."""
    for version in queries.pinned_versions(conn, project, base):
        if isinstance(version, str) and version.strip():
            return version.strip().lstrip("vV").lower()
    return None


# ----------------------------------------------------------------------------- answers

def answer_resolve(conn, tool_input: dict, project: str, now: float,
                   max_age: float | None = None) -> Served | None:
    """`max_age` (a fallback): a tier1 entry that expired at most that long ago will do."""
    name = _s(tool_input.get("libraryName"), 200)
    if not name:
        return None
    now = now - (max_age or 0.0)
    hit = find_tier1(conn, name, project, now)
    if not hit or hit.get("matched") in ("first", "none", "error") or not hit.get("library_id"):
        return None
    lid = hit["library_id"]
    row = queries.library_card(conn, lid)
    lines = [f"- Title: {row['title'] if row and row['title'] else name}",
             f"- Context7-compatible library ID: {lid}"]
    if row:
        if row["description"]:
            lines.append(f"- Description: {' '.join(str(row['description']).split())[:500]}")
        if row["code_snippets"]:
            lines.append(f"- Code Snippets: {row['code_snippets']}")
        if row["reputation"]:
            lines.append(f"- Source Reputation: {row['reputation']}")
        versions = loads_strings(row["versions"])
        if versions:
            lines.append(f"- Versions: {', '.join(versions[:30])}")
    if hit.get("version"):
        pin = f" (versioned ID {hit['versioned_id']})" if hit.get("versioned_id") else ""
        lines.append(f"- Installed version (project lockfile): {hit['version']}{pin}")
    body = "Available Libraries:\n\n" + "\n".join(lines)
    at = queries.last_resolved_at(conn, lid, now) or (row["last_seen"] if row else None) or now
    source = provenance.resolve_source(hit.get("origin"), hit.get("matched"))

    return Served("context7-resolve", f"Context7 library ID for {_q(name, 80)}", when_utc(at),
                  f"from {source}", body, 4000, library_id=lid, at=at)


def answer_docs(conn, tool: str, tool_input: dict, project: str, now: float,
                max_chars: int, budget, max_age: float | None = None) -> Served | None:
    lid, query = context7_docs_args(tool, tool_input)  # argument aliases as the server reads them
    parsed = split_id(lid) if len(lid) <= 300 and len(query) <= 2000 else None
    if not parsed or not query:
        return None
    base, ver = parsed
    ttl, pinned_ttl = _num("MEMHOOKS_TIER2_TTL_S", 4 * 3600.0), _num("MEMHOOKS_SERVE_PINNED_TTL_S", 30 * 86400.0)
    ttl, pinned_ttl = max(ttl, max_age or 0.0), max(pinned_ttl, max_age or 0.0)  # a fallback: longer
    since = {k: now - pinned_ttl for k in _keys(base, ver)} if ver else {base: now - ttl}
    if ver is None:
        pin = pinned_version(conn, project, base)
        if pin:
            since.update({k: now - pinned_ttl for k in _keys(base, pin)})
    cands = {r["document_id"]: (r["topic"], r["fetched_at"])
             for r in queries.tier2_documents(conn, since, MAX_CANDIDATE_DOCS)
             if r["fetched_at"] >= since[r["library_key"]]}
    ignore = set(cv.words(base))
    q = cv.query_stems(query, ignore)
    if len(q) == 1:
        # One word ("hooks") asks for an overview: only docs fetched for that word will do.
        cands = {d: v for d, v in cands.items() if cv.covers(q[0], cv.stems(v[0] or ""))}
    if not cands or not q:
        return None
    ids = list(cands)
    if len(ids) <= TOP_DOCS:
        ranked = ids  # all of them are read anyway (an FTS scan of common words costs ms)
    else:
        # Ranked as search ranks (memhooks.recall.ranking): each document by its best section.
        match = Query(query, ignore).any_word or '""'
        hits = queries.section_ranked(conn, match, TOP_DOCS * 8, window=0, among=ids)
        ranked = list(dict.fromkeys(doc for _sid, doc, _score in hits))[:TOP_DOCS]
    if not ranked:
        return None

    pieces = docwindows.pieces(conn, ranked, q, budget)
    chosen = cv.choose(q, pieces, check=budget.check) if pieces else None
    if not chosen:
        return None
    used = list(dict.fromkeys(k[0] for k, _ in chosen))
    body = SNIPPET_JOIN.join(text for _, text in chosen)
    topics = ", ".join(_q(cands[d][0] or "", 80) for d in used)
    times = sorted(cands[d][1] for d in used)

    when = when_utc(times[-1]) if len(times) == 1 or times[0] == times[-1] else \
        f"{when_utc(times[0])} to {when_utc(times[-1])}"
    live = max(docwindows.sizes(conn, used).values())
    asked = f"for the quer{'ies' if len(used) > 1 else 'y'} {topics}{provenance.team_note(conn, used)}"
    return Served("context7-docs", f"Context7 docs for {lid} ({len(chosen)} snippet{'s' * (len(chosen) > 1)})",
                  when, asked, body, max_chars, used, lid, live, times[0])


def decide(conn, tool_name, tool_input, project: str, now: float | None = None,
           deadline: float | None = None, max_age: float | None = None) -> Served | None:
    """The served answer for one tool call, or None (the call goes to the live tool). The whole
    decision, SQL and Python, stops at `deadline` (time.monotonic(); by default the budget from
    now): then None, and an answer found after it is dropped too. `max_age` (seconds): the
    fallback's staleness (memhooks.recall.fallback), which widens every freshness rule to it
    and ignores the per-tool serve switches; the other rules are the same."""
    return within(conn, deadline, _decide, conn, tool_name, tool_input, project, now, max_age)


def _decide(conn, tool_name, tool_input, project: str, now: float | None, max_age,
            budget) -> Served | None:
    now = time.time() if now is None else now
    kind = classify(tool_name, switches=max_age is None)
    if kind is None or not isinstance(tool_input, dict):
        return None
    max_chars = int(_num("MEMHOOKS_SERVE_MAX_CHARS", 12000))
    if kind == "context7-resolve":
        return answer_resolve(conn, tool_input, project, now, max_age)
    if kind == "context7-docs":
        return answer_docs(conn, tool_name.rsplit("__", 1)[-1], tool_input, project, now, max_chars,
                           budget, max_age)
    if kind == "webfetch":
        return answer_webfetch(conn, tool_input, now, max_chars, max_age)
    if kind == "declared":
        server, tool = parse_tool_name(tool_name)
        row = doc_sources.find(server, tool)
        if row is None or not server:
            return None
        return answer_declared(conn, row, server, tool, tool_input, now, max_chars, max_age)
    return answer_exa_fetch(conn, tool_input, now, max_chars, max_age)


# ----------------------------------------------------------------------------- the hook

def call_key(tool_name: str, tool_input, session_id) -> str:
    """The identity of one call within a session, for the "the agent insists" rule. Two
    checksums and the length (zlib, not hashlib: OpenSSL costs every hook run ~2 ms); a
    collision could only let a call through live, never serve a wrong answer."""
    blob = repr(_canon([session_id or "", tool_name, tool_input])).encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}{len(blob):x}"


def serve_payload(payload: dict, db: str, now: float | None = None,
                  call: tuple[str, dict] | None = None, rewrite=None) -> dict | None:
    """The hook's stdout object for one PreToolUse payload, or None. Records what it serves.
    `call`: the (tool name, arguments) the payload's call is answered as (a `ctx7 docs`
    Bash command as Context7's query-docs, memhooks.ctx7_command); the "agent insists"
    key and the log keep the payload's own call. `rewrite(library_id)`: the payload's own
    tool input asking for another library ID (by default the docs call's ID argument).

    A Context7 docs call for an unversioned ID that the project pins (memhooks.recall.pin)
    is answered as a call for the versioned ID: served from that version's docs (the label
    says so), else let through with the versioned ID (`updatedInput`, permission "allow")."""
    now = time.time() if now is None else now
    own_name, own_input = payload.get("tool_name"), payload.get("tool_input")
    tool_name, tool_input = call if call is not None else (own_name, own_input)
    kind = classify(tool_name)
    pin_kind = classify(tool_name, switches=False) == "context7-docs" and pinning.enabled()
    if (kind is None and not pin_kind) or not isinstance(tool_name, str) or not isinstance(own_name, str) \
            or not os.path.isfile(db):
        return None
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    project = project_dir(payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
    if blocked(db, project):
        return None  # excluded or paused: serve nothing
    key = call_key(own_name, own_input, session)
    deadline = budget_deadline()
    conn = connect_guarded(db, deadline)
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            return None  # new or behind the migrations: nothing to serve (never migrated here)

        tool = tool_name.rsplit("__", 1)[-1]
        pin = pinning.find(conn, tool, tool_input, project) if pin_kind else None
        let_through = None
        if pin is not None:
            updated = rewrite(pin.library_id) if rewrite is not None else (
                with_docs_library_id(tool, own_input, pin.library_id) if isinstance(own_input, dict) else None)
            if not isinstance(tool_input, dict):
                pin = None
            else:
                # Rewritten and approved only when the call can be (a plain `ctx7 docs` command,
                # see memhooks.entry.pre_tool_use); else only the pinned docs may answer it.
                let_through = pinning.allow(pin, updated) if isinstance(updated, dict) else None
                tool_input = with_docs_library_id(tool, tool_input, pin.library_id)
        if kind is None:
            return let_through  # serving is off for this tool: the pin alone
        if serve_log.recently_served(conn, key, now - _num("MEMHOOKS_SERVE_INSIST_S", 600)):
            with transaction(conn):
                serve_log.record(conn, outcome="insisted", call_key=key, tool=kind,
                                 tool_name=own_name, project=project, session_id=session, now=now)
            return let_through
        served = decide(conn, tool_name, tool_input, project, now, deadline)
        if served is None or time.monotonic() > deadline:
            return let_through  # over budget: let the call run rather than be late
        if pin is not None:
            served.what = f"{served.what}; {pinning.label(pin)}"
        install(conn, deadline)  # (decide took its handler off) the writes stop at the budget too

        note_documents(db, content_hashes(conn, served.doc_ids), project, now)
        with transaction(conn):
            serve_log.record(conn, outcome="served", call_key=key, tool=served.kind,
                             tool_name=own_name, project=project, session_id=session,
                             library_id=served.library_id, document_ids=served.doc_ids,
                             served_bytes=len(served.text.encode("utf-8", "replace")),
                             live_bytes=served.live_bytes, now=now)
    finally:
        conn.close()  # (no contextlib: one import less on every tool call)
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": served.text}}


def hook_json(result: dict) -> str:
    """The hook's one-line JSON object: json.dumps(result, ensure_ascii=False)."""
    return dumps(result)
