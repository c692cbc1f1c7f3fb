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

Anything less certain is a miss (a miss costs one call; a wrong answer misleads). The read
is bounded: at most MAX_EVENTS events of the tool, within BUDGET_S.
"""

from memhooks._jsonlite import loads
from memhooks.config import max_doc_bytes
from memhooks.names import checked_library_id, library_key, lookup_keys, loose_key, pick_library, topic_key
from memhooks.sqltext import content_hash
from memhooks.store.pending import has_pending_answers, newest_tool_events, open_journal
from memhooks.store.sqlite_file import closing
from memhooks.tools import classify, parse_tool_name

MAX_EVENTS = 16
BUDGET_S = 0.05
RESOLVE = "resolve-library-id"
DOCS = ("query-docs", "get-library-docs")


def _events(db: str, tools: tuple) -> list:
    """(tool, parsed payload) of the newest pending PostToolUse events of Context7 `tools`."""
    conn = open_journal(db, BUDGET_S)
    if conn is None:
        return []
    with closing(conn):
        rows = newest_tool_events(conn, tools, MAX_EVENTS)
    out = []
    for tool_name, payload in rows:
        server, tool = parse_tool_name(tool_name)
        if tool not in tools or classify(server, tool) != "context7" or not isinstance(payload, str):
            continue
        try:
            event = loads(payload)
        except (ValueError, RecursionError):
            continue
        if (isinstance(event, dict) and event.get("hook_event_name") == "PostToolUse"
                and event.get("tool_name") == tool_name and isinstance(event.get("tool_input"), dict)):
            out.append((tool, event))
    return out


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


def tier1(db: str, name: str) -> str | None:
    """A library ID for `name` from a pending resolve-library-id result, or None."""
    wanted, loose = set(lookup_keys(name)), loose_key(name)
    for _tool, event in _events(db, (RESOLVE,)):
        tool_input = event["tool_input"]
        asked = _str(tool_input.get("libraryName")) or _str(tool_input.get("library_name"))
        if not asked or not (wanted & set(lookup_keys(asked)) or loose_key(asked) == loose):
            continue
        text = _text(event.get("tool_response"))
        if text is None or len(text) > 1024 * 1024 or not _storable(text):
            continue
        candidates = _blocks(text)
        picked = pick_library(asked, candidates)
        if picked is None or picked[1] != "exact":
            continue
        lid = checked_library_id(candidates[picked[0]][0])
        if lid:
            return lid
    return None


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
    """(body, content hash) for (library, topic) from a pending Context7 docs result, or None.
    `forgotten(hash)` says whether the user forgot a text."""
    lkey, tkey = library_key(library_id), topic_key(topic)
    if not lkey or not tkey:
        return None
    cap = max_doc_bytes()
    for tool, event in _events(db, DOCS):
        tool_input = event["tool_input"]
        id_keys = (("context7CompatibleLibraryID", "libraryId", "libraryID", "libraryName")
                   if tool == "get-library-docs" else
                   ("libraryId", "context7CompatibleLibraryID", "libraryID", "libraryName"))
        lid = next((v for v in (_str(tool_input.get(k)) for k in id_keys) if v), "")
        order = ("topic", "query") if tool == "get-library-docs" else ("query", "topic")
        asked = next((v for v in (_str(tool_input.get(k)) for k in order) if v), "")
        if library_key(lid) != lkey or topic_key(asked) != tkey:
            continue
        text = _text(event.get("tool_response"))
        if text is None or not _storable(text) or len(text.encode("utf-8")) > cap:
            continue
        if not _plainly_docs(text):
            continue
        digest = content_hash(text)
        if forgotten is not None and forgotten(digest):
            continue
        return text, digest
    return None


def has_pending(db: str) -> bool:
    """Whether the journal holds events that could add an answer (read-only)."""
    conn = open_journal(db, BUDGET_S)
    if conn is None:
        return False
    with closing(conn):
        return has_pending_answers(conn)
