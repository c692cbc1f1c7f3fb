"""Admission: the one gate every row passes before a projection write, whatever its door.

Doors: the capture hook (through the journal and the adapters), `memhooks replay` and
`memhooks reindex` (the same path), `memhooks import` (JSONL), the team pull and team search,
`lc-cache-write`, the warm (Context7 API answers) and `memhooks add`/`refresh`. The writers
in memhooks.store.projections (`upsert_document`, `upsert_library`, `upsert_tier1`,
`upsert_tier2`, and `apply_cache_write` through them) are the only writers of those tables,
and each one calls the matching ``admit_*`` here before any SQL, so no door can skip it. A
door may be stricter before it calls a writer; it can never be looser.

Contract (other modules code against it):

* every writer takes a keyword ``provenance: str``, one of ``capture``, ``import``,
  ``manual`` (lc-cache-write), ``added`` (`memhooks add`/`refresh`), ``warm`` (Context7
  API answers) or ``team:<member>`` (member: letters, digits, ``._-``, at most 64); the
  value is kept on the row (column ``provenance`` of documents, libraries, tier1, tier2).
* a refused row raises :class:`Refused` (an Exception with a ``.reason`` str) from the
  writer, before anything is written: the caller's transaction is untouched, and the door
  counts the refusal and goes on with its next row. No writer signals a refusal by its
  return value. (``upsert_document`` still returns ``(None, False)`` for a text the user
  forgot, and ``upsert_tier1`` returns False when a fresher local answer is kept: neither
  is a refusal.)

Rules, per column (see docs/trust.md, "## Admission", for the table by door):

* text: every text column is made storable (NULs become spaces, lone surrogates U+FFFD),
  then redacted (memhooks.redact) — content, url, title, topic, version, library_id,
  source, tool, session, metadata (its JSON text), tier1 name/version/versioned_id,
  libraries title/description/versions/source/reputation.
* one-line fields (title, topic, source, tool, libraries title/description/reputation, tier1
  name): ESC sequences and controls removed (memhooks.egress.clean), format and line-break
  characters become spaces, runs collapse, capped; a field that looks like a fence line
  (```/~~~, a run of dashes, ``</…``, or egress's own marker check: ``reference only`` or
  ``-- begin/end`` in any disguise, TR39 confusables included) is dropped (titles,
  descriptions) or refuses the row (a tier1 name, a tier2 topic: those are keys). Egress
  still defuses everything it prints; this keeps the stored values plain.
* grammar: library IDs have the Context7 shape (memhooks.names.checked_library_id) —
  refused for libraries, tier1 with an ID and tier2; dropped to NULL on a document (it is
  then never a tier2 answer). Versions match memhooks.names.valid_version (after
  redaction, so a token in a version never passes) or become NULL. A tier1 name is a
  library name: letters, digits, `@/._-+~#:!` and single spaces, at most 214 characters.
  Ecosystems are the known ones or NULL; source_tool, type and origins are short
  lower-case words; a URL is http(s) without spaces or controls, or NULL.
* the error verdict (memhooks.classify, one classifier for every door): a Cloudflare-style
  interstitial, EXA's "The fetched content is empty", an HTML error page, a JSON error
  object, a page whose heading or `<title>` names an HTTP error ("# 502 Bad Gateway" over
  "nginx") or a sign-in wall, a text that is, whole, one of the tools' error forms ("Rate
  limited or quota exceeded…") or their "nothing found" answers ("Documentation not found or
  not finalized…"), or a short text that opens like an error, is never a document: refused.
  A text with documentation's shape (headings, code, Source: lines) is refused only when its
  prose is, whole, an error form: a genuine short snippet is kept whatever words it uses.
  `memhooks add`/`refresh` ask it of the page as sent, before HTML becomes text
  (``admit_page``). Empty content is refused.
* size: the content is cut to the cap (config.max_doc_bytes, lc-cache-write:
  config.max_write_bytes) on a UTF-8 character boundary, measured on the real UTF-8 bytes,
  with a note saying so, and the row is marked ``truncated`` — the same at every door: a
  40 MiB document is cut, not refused (the capture hook always cut; a door's file or the
  journal still holds what came in). ``bytes`` is always recomputed from the stored text;
  a door's own figure is never read.
* time: every timestamp is clamped to [FLOOR_EPOCH, now] (NaN and infinities become now):
  nothing is dated in the future, so nothing stays fresh past its TTL. The floor is a fixed
  sane date, not the store's first event: `memhooks import-transcripts` legitimately dates
  captures before the store existed. TTLs are clamped to [0, the configured TTL].
* hash: content_hash is recomputed from the stored text. A door that sends one (import)
  must send the hash of the content it sends (as `memhooks export` writes it): a mismatch
  is refused.

Standard library only (lc-cache-write, a hot path, runs it). Linear in the input.
"""

import json
import time
import unicodedata

from memhooks import config
from memhooks.classify import document_error, fetched_page_error
from memhooks.digest import content_hash as content_hash
from memhooks.digest import normalise_for_hash as normalise_for_hash
from memhooks.egress import clean, is_marker
from memhooks.names import ECOSYSTEMS, checked_library_id, valid_library_id, valid_version
from memhooks.redact import redact_text

FLOOR_EPOCH = 1704067200.0  # 2024-01-01T00:00:00Z: nothing memhooks captures is older
TRUNCATION_NOTE = "\n\n[memhooks: truncated: original {orig} bytes, kept {kept} bytes]\n"
MAX_NAME = 214
MAX_URL = 4096


# ----------------------------------------------------------------------------- text

def storable_text(text: str) -> str:
    """Text SQLite can store and search: NULs become spaces, lone surrogates (JSON
    escapes like \\ud800 decode to them) become U+FFFD."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def cap_text(text: str, max_bytes: int) -> tuple[str, bool]:
    """`text` cut to `max_bytes` UTF-8 bytes on a character boundary, with a note saying
    so; (text, whether it was cut)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text, False
    kept = data[:max_bytes].decode("utf-8", "ignore")
    note = TRUNCATION_NOTE.format(orig=len(data), kept=len(kept.encode("utf-8")))
    return kept + note, True


def _clean(value) -> str:
    """Storable and redacted."""
    return redact_text(storable_text(value))


_ASCII_CONTROLS = {c: " " for c in list(range(0, 32)) + [127]}
_DASHLIKE = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2796\ufe58\ufe63\uff0d\u02d7\u2e3a\u2e3b\u30fc\u2500\u2501\u23af\u2574\u2576\u2578\u257a"


def _flat(s: str) -> str:
    if s.isascii():
        s = s.translate(_ASCII_CONTROLS)
    else:
        s = "".join(" " if ch != " " and (ch.isspace() or unicodedata.category(ch)[0] in "CZ")
                    else ch for ch in s)
    return " ".join(s.split())


def line(value, max_chars: int) -> str | None:
    """A short outside field as one storable, redacted line of at most `max_chars`
    characters; None when nothing is left. Bounded work whatever the input's size."""
    if value is None:
        return None
    s = value if isinstance(value, str) else str(value)
    window = max(4096, max_chars * 8)
    if len(s) > window:
        s = s[:window]
        cut = max(s.rfind(" "), s.rfind("\n"), s.rfind("\t"))
        s = s[:cut] if cut > 0 else ""  # never keep a token the cut split (a partial secret)
    flat = _flat(clean(_clean(s)))  # egress's cleaner: ESC sequences and controls removed whole
    if len(flat) > max_chars:
        flat = flat[:max_chars].rstrip()
    return flat or None


def fence_like(text: str) -> bool:
    """Whether a one-line field could pass for a fence line: a code fence, a run of dashes
    (or look-alikes), a closing tag, or `reference only` in any spacing or case."""
    head = text.lstrip()
    if not head:
        return False
    if head.startswith(("```", "~~~", "</", "<!--", "===", "___", "***")):
        return True
    run = 0
    for ch in head[:8]:
        if ch in _DASHLIKE:
            run += 1
        elif ch in " \t":
            continue
        else:
            break
    if run >= 2:
        return True
    if head[0] in _DASHLIKE:
        words = _compact(head[:80])
        if words.startswith(("begin", "end")):
            return True
    if "referenceonly" in _compact(text[:2000]):
        return True
    return is_marker(text[:2000])  # egress's own check: TR39 confusables and all


def _compact(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _word(value, max_chars: int = 32, extra: str = "-_") -> str | None:
    """A short lower-case word (source_tool, type, origin, matched), or None."""
    if not isinstance(value, str):
        return None
    v = value.strip()
    if not v or len(v) > max_chars or not v.isascii():
        return None
    if not all(ch.isalnum() or ch in extra for ch in v):
        return None
    return v


def url_or_none(value) -> str | None:
    """An http(s) URL without whitespace or controls (redacted), or None."""
    if not isinstance(value, str):
        return None
    v = _clean(value.strip()[:MAX_URL + 1])
    if len(v) > MAX_URL or not v.lower().startswith(("http://", "https://")):
        return None
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in v):
        return None
    return v


def version_or_none(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    v = redact_text(storable_text(value.strip()[:200]))
    return v if valid_version(v) else None


def library_id_or_none(value) -> str | None:
    if not isinstance(value, str):
        return None
    return checked_library_id(redact_text(storable_text(value[:400])))


_NAME_CHARS = frozenset("@/._-+~#:! ")


def library_name(value) -> str | None:
    """A tier1 name (what the agent or a manifest called a library), checked: letters and
    digits (any script), `@/._-+~#:!` and single spaces, at most 214 characters."""
    if not isinstance(value, str):
        return None
    v = value.strip()
    if not v or len(v) > MAX_NAME or "  " in v:
        return None
    if not all(ch.isalnum() or ch in _NAME_CHARS for ch in v):
        return None
    if redact_text(v) != v or fence_like(v):
        return None
    return v


# ----------------------------------------------------------------------------- time

def clamp_time(value, now: float | None = None) -> float:
    """`value` clamped to [FLOOR_EPOCH, now]; now when it is not a finite number."""
    real = time.time()
    top = real if now is None else min(float(now), real)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return top
    v = float(value)
    if v != v or v in (float("inf"), float("-inf")):
        return top
    return max(FLOOR_EPOCH, min(v, top))


def clamp_ttl(ttl_s, limit: float) -> float:
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, (int, float)) or ttl_s != ttl_s:
        return 0.0
    return max(0.0, min(float(ttl_s), float(limit)))


PROVENANCES = ("capture", "import", "manual", "added", "warm")
TEAM_PREFIX = "team:"
MAX_MEMBER = 64

MAX_TITLE = 300
MAX_TOPIC = 1000
MAX_SOURCE = 2000
MAX_SHORT = 100  # tool, session id, reputation
MAX_DESCRIPTION = 1000
MAX_LIBRARY_TITLE = 200
MAX_VERSIONS = 500
MAX_METADATA = 256 * 1024
MAX_PROJECT = 4096

REDACT_MARGIN = 8192  # bytes past a cut that are redacted with it, so no secret is split


class Refused(Exception):
    """A row admission will not let into the store; ``reason`` says why (one line)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ----------------------------------------------------------------------------- provenance

def check_provenance(value) -> str:
    """`value` when it is a provenance admission knows (see the module doc), else Refused."""
    if isinstance(value, str):
        if value in PROVENANCES:
            return value
        if value.startswith(TEAM_PREFIX):
            member = value[len(TEAM_PREFIX):]
            if 0 < len(member) <= MAX_MEMBER and _word(member, MAX_MEMBER, "-_.") == member:
                return value
    raise Refused(f"unknown provenance {str(value)[:40]!r}")


# ----------------------------------------------------------------------------- rows

def _metadata(metadata) -> str | None:
    if metadata is None or metadata == {} or metadata == "":
        return None
    if isinstance(metadata, str):
        if len(metadata) > MAX_METADATA:
            return None
        try:
            metadata = json.loads(metadata)
        except (ValueError, RecursionError):
            return None
    if not isinstance(metadata, dict):
        return None
    try:
        text = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) > MAX_METADATA:
        return None
    # replacements never hold `"` or `\`: the redacted text is still the same JSON shape
    return redact_text(storable_text(text))


def _project(value) -> str:
    v = storable_text(value if isinstance(value, str) else "")[:MAX_PROJECT]
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in v):
        v = "".join(f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else ch for ch in v)
    return v


_SHELL = frozenset(";|&$`<>\\")


def _context7_source(source: str) -> None:
    """A Context7 document's source is its library ID, or `resolve:<what was asked>` with
    no shell metacharacters (the ID and the name a lookup prints are checked apart)."""
    if source.startswith("resolve:"):
        if any(ch in _SHELL for ch in source):
            raise Refused("resolve label holds shell metacharacters")
    elif library_id_or_none(source) is None:
        raise Refused("source is not a Context7 ID")


def admit_document(*, project, source, source_tool, content, title=None, type=None,
                   url=None, library_id=None, topic=None, version=None, metadata=None,
                   session_id=None, tool=None, max_bytes: int | None = None, now=None,
                   provenance: str, claimed_hash=None) -> dict:
    """The columns of a document as it may be stored, or Refused."""
    prov = check_provenance(provenance)
    if not isinstance(content, str):
        raise Refused("content is not text")
    if claimed_hash is not None and claimed_hash != content_hash(content):
        raise Refused("content_hash does not match the content")
    if max_bytes is None:
        max_bytes = config.max_doc_bytes()
    text = storable_text(content)
    sent = len(text.encode("utf-8"))
    if sent > max_bytes:
        # cut with a margin, redact, then cut to the cap: a secret across the cap is whole
        # when it is redacted, and a 40 MiB text costs the cap, not its size
        text = text.encode("utf-8")[:max_bytes + REDACT_MARGIN].decode("utf-8", "ignore")
    text = redact_text(text)
    data = text.encode("utf-8")
    truncated = sent > max_bytes or len(data) > max_bytes
    if truncated:
        kept = data[:max_bytes].decode("utf-8", "ignore")
        text = kept + TRUNCATION_NOTE.format(orig=sent, kept=len(kept.encode("utf-8")))
    if not text.strip():
        raise Refused("empty content")
    clean_title = line(title, MAX_TITLE)
    if clean_title and fence_like(clean_title):
        clean_title = None
    stool = _word(source_tool)
    if stool is None:
        raise Refused("source_tool is not a short word")
    clean_source = line(source, MAX_SOURCE) or ""
    if stool == "context7":
        _context7_source(clean_source)
    why = document_error(text, clean_title, stool)
    if why:
        raise Refused(f"not a document: {why}")
    dtype = "library-docs" if type is None else _word(type)
    if dtype is None:
        raise Refused("type is not a short word")
    clean_topic = line(topic, MAX_TOPIC)
    if clean_topic and fence_like(clean_topic):
        clean_topic = None
    at = clamp_time(now)
    return {
        "project": _project(project or ""),
        "source": clean_source,
        "source_tool": stool,
        "title": clean_title,
        "content": text,
        "content_hash": content_hash(text),
        "type": dtype,
        "metadata": _metadata(metadata),
        "session_id": line(session_id, MAX_SHORT),
        "url": url_or_none(url),
        "library_id": library_id_or_none(library_id),
        "topic": clean_topic,
        "version": version_or_none(version),
        "bytes": len(text.encode("utf-8")),
        "tool": line(tool, MAX_SHORT),
        "truncated": 1 if truncated else 0,
        "now": at,
        "provenance": prov,
    }


def admit_page(raw: str) -> None:
    """A page `memhooks add`/`refresh` fetched, as the server sent it (HTML before it is
    turned into text): Refused when it is an error page (memhooks.classify.fetched_page_error),
    so an error page sent with status 200 is never stored, and never replaces a stored page.
    The text made of it then passes admit_document like every door's."""
    why = fetched_page_error(raw) if isinstance(raw, str) else None
    if why:
        raise Refused(f"not a document: {why}")


def _int(value, top: int = 10**12) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    if value in (float("inf"), float("-inf")):
        return None
    return max(0, min(int(value), top))


def _score(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    if value in (float("inf"), float("-inf")):
        return None
    return max(-1e6, min(float(value), 1e6))


def admit_library(*, library_id, title=None, origin, description=None, code_snippets=None,
                  reputation=None, trust_score=None, benchmark_score=None, versions=None,
                  source=None, now=None, provenance: str) -> dict:
    prov = check_provenance(provenance)
    lid = library_id_or_none(library_id)
    if lid is None:
        raise Refused("library_id is not a Context7 ID")
    org = _word(origin, 32)
    if org is None:
        raise Refused("origin is not a short word")
    clean_title = line(title, MAX_LIBRARY_TITLE)
    if clean_title and fence_like(clean_title):
        clean_title = None
    desc = line(description, MAX_DESCRIPTION)
    if desc and fence_like(desc):
        desc = None
    rep = line(reputation, 20)
    if rep is not None and _word(rep, 20, "-_ ") is None:
        rep = None
    kept = []
    if isinstance(versions, (list, tuple)):
        for v in list(versions)[:MAX_VERSIONS]:
            v = version_or_none(v)
            if v is not None and v not in kept:
                kept.append(v)
    src = line(source, MAX_SOURCE)
    if src and fence_like(src):
        src = None
    return {
        "library_id": lid, "title": clean_title, "origin": org, "description": desc,
        "code_snippets": _int(code_snippets), "reputation": rep,
        "trust_score": _score(trust_score), "benchmark_score": _score(benchmark_score),
        "versions": kept, "source": src, "now": clamp_time(now), "provenance": prov,
    }


MATCHED = ("exact", "first", "none", "write", "team", "team-suggestion", "warm", "error",
           "rejected")  # rejected: the search answered another library (memhooks.warm.agree)
TIER1_ORIGINS = ("capture", "write", "warm-local", "warm-api")


def admit_tier1(*, project, name, library_id, origin, ttl_s, ecosystem=None, version=None,
                versioned_id=None, matched=None, now=None, provenance: str) -> dict:
    prov = check_provenance(provenance)
    clean_name = library_name(name)
    if clean_name is None:
        raise Refused("name is not a library name")
    lid = None
    if library_id is not None:
        lid = library_id_or_none(library_id)
        if lid is None:
            raise Refused("library_id is not a Context7 ID")
    if origin not in TIER1_ORIGINS:
        raise Refused("origin is not a tier1 origin")
    vid = None
    if versioned_id and lid:
        vid = library_id_or_none(versioned_id)
        if vid is None or not valid_library_id(vid):
            vid = None
    limit = config.tier1_ttl_s() if lid else max(config.tier1_negative_ttl_s(),
                                                  config.tier1_error_ttl_s())
    return {
        "project": _project(project or ""), "name": clean_name, "library_id": lid,
        "origin": origin, "ttl_s": clamp_ttl(ttl_s, limit),
        "ecosystem": ecosystem if ecosystem in ECOSYSTEMS else None,
        "version": version_or_none(version), "versioned_id": vid,
        "matched": matched if matched in MATCHED else None,
        "now": clamp_time(now), "provenance": prov,
    }


def admit_tier2(*, library_id, topic, document_id, origin, ttl_s, now=None,
                provenance: str) -> dict:
    prov = check_provenance(provenance)
    lid = library_id_or_none(library_id)
    if lid is None:
        raise Refused("library_id is not a Context7 ID")
    clean_topic = line(topic, MAX_TOPIC)
    if not clean_topic:
        raise Refused("empty topic")
    if fence_like(clean_topic):
        raise Refused("topic looks like a fence line")
    if isinstance(document_id, bool) or not isinstance(document_id, int):
        raise Refused("document_id is not an id")
    org = _word(origin, 32)
    if org is None:
        raise Refused("origin is not a short word")
    return {
        "library_id": lid, "topic": clean_topic, "document_id": document_id, "origin": org,
        "ttl_s": clamp_ttl(ttl_s, config.tier2_ttl_s()), "now": clamp_time(now),
        "provenance": prov,
    }
