"""Answers from events not yet ingested, for the one key a lookup asks (standard library only).

A lookup never runs an ingest: on a miss in the projections it reads the newest pending
journal events of the one tool that could answer it (the capture hook records the tool
name when it journals) and answers from one of them only when ingestion would certainly
store the same answer:

* `lc-cache-lookup NAME`: a Context7 resolve-library-id result for that name whose
  library blocks give an exact match (title or ID tail), with a well-formed ID;
* `lc-cache-lookup-docs ID TOPIC`: a Context7 docs result for that library and topic
  whose text is plainly documentation: it opens with a markdown heading and holds a code
  fence (the shape every error check of the adapters lets through), within the document
  size cap, and not a text the user forgot.

And from an `lc-cache-write` the projections could not take yet (the store new or behind: a
plugin's first session, its venv still being built), which admission judged before it was
journaled pending, in its admitted form (memhooks.recall.lc_write.journal_write): a tier1
write for that name, a tier2 write for that library and topic whose
body is within the cap and not a text the user forgot, either within its tier's TTL. The
newest pending event that answers wins, as the ingester's last write would.

Anything less certain is a miss (a miss costs one call; a wrong answer misleads). The read
is bounded: at most MAX_EVENTS events of the tool (and as many cache writes), within BUDGET_S.
"""

import time

from memhooks._jsonlite import loads
from memhooks.config import max_doc_bytes, max_write_bytes, tier1_ttl_s, tier2_ttl_s
from memhooks.digest import content_hash
from memhooks.names import checked_library_id, library_key, lookup_keys, loose_key, pick_library, topic_key
from memhooks.store.pending import has_pending_answers, newest_cache_writes, newest_tool_events, open_journal
from memhooks.store.sqlite_file import closing
from memhooks.tools import classify, parse_tool_name

MAX_EVENTS = 16
BUDGET_S = 0.05
RESOLVE = "resolve-library-id"
DOCS = ("query-docs", "get-library-docs")


def _events(db: str, tools: tuple) -> tuple[list, list]:
    """(id, tool, parsed payload) of the newest pending PostToolUse events of Context7 `tools`,
    and (id, project, received_at, record) of the newest pending cache writes."""
    conn = open_journal(db, BUDGET_S)
    if conn is None:
        return [], []
    with closing(conn):
        rows = newest_tool_events(conn, tools, MAX_EVENTS)
        written = newest_cache_writes(conn, MAX_EVENTS)
    out = []
    for event_id, tool_name, payload in rows:
        server, tool = parse_tool_name(tool_name)
        if tool not in tools or classify(server, tool) != "context7" or not isinstance(payload, str):
            continue
        event = _parsed(payload)
        if (isinstance(event, dict) and event.get("hook_event_name") == "PostToolUse"
                and event.get("tool_name") == tool_name and isinstance(event.get("tool_input"), dict)):
            out.append((event_id, tool, event))
    writes = []
    for event_id, project, received_at, payload in written:
        record = _parsed(payload) if isinstance(payload, str) else None
        if isinstance(record, dict) and record.get("hook_event_name") == "CacheWrite":
            writes.append((event_id, project or "", received_at, record))
    return out, writes


def _parsed(payload: str):
    try:
        return loads(payload)
    except (ValueError, RecursionError):
        return None


def _fresh(received_at, ttl_s: float) -> bool:
    return isinstance(received_at, (int, float)) and received_at + ttl_s > time.time()


def _text(tool_response) -> str | None:
    """The text of a plain response: text blocks joined by a blank line (as ingestion joins
    them), or a string that is not JSON; None for any other shape."""
    if isinstance(tool_response, str):
        return None if tool_response.lstrip()[:1] in ("[", "{") else tool_response
    if not isinstance(tool_response, list) or not tool_response:
        return None
    parts = []
    for block in tool_response:
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            return None
        if block["text"]:
            parts.append(block["text"])
    return "\n\n".join(parts) or None


def _storable(text: str) -> bool:
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False  # a lone surrogate: ingestion rewrites the text
    return True


def _str(value) -> str:
    return value.strip() if isinstance(value, str) else ""


# ----------------------------------------------------------------------------- tier1

def _blocks(text: str) -> list[tuple[str, str | None]]:
    """(library ID, title) of each library block of a resolve text (`- Key: value` lines
    between `----------` separators)."""
    out, lid, title = [], None, None
    for line in text.split("\n") + ["---"]:
        s = line.strip()
        if s.startswith("---") and not s.strip("-"):
            if lid:
                out.append((lid, title))
            lid = title = None
            continue
        if not s.startswith("- "):
            continue
        key, sep, value = s[2:].partition(":")
        key, value = key.strip().lower(), value.strip()
        if not sep:
            continue
        if key in ("context7-compatible library id", "context7 compatible library id") and lid is None:
            lid = value.split()[0] if value.split() else None
        elif key == "title" and title is None:
            title = value
    return out


def _matches(name: str, asked: str) -> bool:
    return bool(set(lookup_keys(name)) & set(lookup_keys(asked))) or loose_key(asked) == loose_key(name)


def tier1(db: str, name: str) -> str | None:
    """A library ID for `name` from the newest pending resolve-library-id result or cache
    write that gives one, or None."""
    events, writes = _events(db, (RESOLVE,))
    answers = []  # (event id, library ID)
    for event_id, _project, received_at, record in writes:
        if (record.get("tier") == "tier1" and _matches(name, _str(record.get("name")))
                and _fresh(received_at, tier1_ttl_s())):
            lid = checked_library_id(_str(record.get("library_id")))
            if lid:
                answers.append((event_id, lid))
                break  # newest first
    for event_id, _tool, event in events:
        lid = _resolved(event, name)
        if lid:
            answers.append((event_id, lid))
            break
    return max(answers)[1] if answers else None


def _resolved(event: dict, name: str) -> str | None:
    """The library ID a pending resolve-library-id result gives `name` beyond doubt."""
    tool_input = event["tool_input"]
    asked = _str(tool_input.get("libraryName")) or _str(tool_input.get("library_name"))
    if not asked or not _matches(name, asked):
        return None
    text = _text(event.get("tool_response"))
    if text is None or len(text) > 1024 * 1024 or not _storable(text):
        return None
    candidates = _blocks(text)
    picked = pick_library(asked, candidates)
    if picked is None or picked[1] != "exact":
        return None
    return checked_library_id(candidates[picked[0]][0])


# ----------------------------------------------------------------------------- tier2

def _plainly_docs(text: str) -> bool:
    """Documentation beyond doubt: a markdown heading first, a code fence in it, and none of
    the notes Claude Code puts in place of a large output."""
    s = text.strip()
    first = s.split("\n", 1)[0]
    hashes = len(first) - len(first.lstrip("#"))
    if not (1 <= hashes <= 6 and first[hashes:hashes + 1] == " " and first[hashes:].strip()):
        return False
    if "```" not in s:
        return False
    low = s[:8000].lower()
    return "<persisted-output>" not in low and "saved to" not in low


def tier2(db: str, library_id: str, topic: str, forgotten=None) -> tuple[str, str] | None:
    """(body, content hash) for (library, topic) from the newest pending Context7 docs result
    or cache write that gives one, or None. `forgotten(hash)` says whether the user forgot a
    text."""
    lkey, tkey = library_key(library_id), topic_key(topic)
    if not lkey or not tkey:
        return None
    events, writes = _events(db, DOCS)
    answers = []  # (event id, body)
    cap = max_write_bytes()
    for event_id, _project, received_at, record in writes:
        body = record.get("body")
        if (record.get("tier") != "tier2" or library_key(_str(record.get("library_id"))) != lkey
                or topic_key(_str(record.get("topic"))) != tkey or not isinstance(body, str)
                or not _fresh(received_at, tier2_ttl_s())):
            continue
        if body.strip() and _storable(body) and len(body.encode("utf-8")) <= cap:
            answers.append((event_id, body, content_hash(body)))
        break  # the newest write of the key is the one the ingester keeps
    cap = max_doc_bytes()
    for event_id, tool, event in events:
        text = _captured_docs(tool, event, lkey, tkey, cap)
        if text is not None:
            digest = content_hash(text)
            if forgotten is None or not forgotten(digest):
                answers.append((event_id, text, digest))
                break
    answers = [a for a in answers if forgotten is None or not forgotten(a[2])]
    return max(answers)[1:] if answers else None


def _captured_docs(tool: str, event: dict, lkey: str, tkey: str, cap: int) -> str | None:
    """The text of a pending Context7 docs result for (lkey, tkey) that is plainly
    documentation, or None."""
    tool_input = event["tool_input"]
    id_keys = (("context7CompatibleLibraryID", "libraryId", "libraryID", "libraryName")
               if tool == "get-library-docs" else
               ("libraryId", "context7CompatibleLibraryID", "libraryID", "libraryName"))
    lid = next((v for v in (_str(tool_input.get(k)) for k in id_keys) if v), "")
    order = ("topic", "query") if tool == "get-library-docs" else ("query", "topic")
    asked = next((v for v in (_str(tool_input.get(k)) for k in order) if v), "")
    if library_key(lid) != lkey or topic_key(asked) != tkey:
        return None
    text = _text(event.get("tool_response"))
    if text is None or not _storable(text) or len(text.encode("utf-8")) > cap:
        return None
    return text if _plainly_docs(text) else None


def has_pending(db: str) -> bool:
    """Whether the journal holds events that could add an answer (read-only)."""
    conn = open_journal(db, BUDGET_S)
    if conn is None:
        return False
    with closing(conn):
        return has_pending_answers(conn)
