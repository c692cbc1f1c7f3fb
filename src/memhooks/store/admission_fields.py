"""Admission, part 2: the checks of single values (text, one-line fields, names, IDs,
versions, URLs, times) that memhooks.store.admission applies to every row. Standard library
only (lc-cache-write runs them); each is linear in its input, with bounded work per field."""

import time

from memhooks.redact import redact_text
from memhooks.sqltext import content_hash as content_hash
from memhooks.sqltext import normalise_for_hash as normalise_for_hash

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
        # lazy: unicodedata only for non-ASCII text
        import unicodedata

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
    # lazy: egress's cleaner only for a line being admitted
    from memhooks.egress import clean  # ESC sequences and controls removed whole

    flat = _flat(clean(_clean(s)))
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
    # lazy: egress's confusable check only when the cheap checks pass
    from memhooks.egress import is_marker  # egress's own check: TR39 confusables and all

    return is_marker(text[:2000])


def _compact(text: str) -> str:
    if not text.isascii():
        # lazy: unicodedata only for non-ASCII text
        import unicodedata

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
    # lazy: the name grammar only when a version is checked
    from memhooks.names import valid_version

    if not isinstance(value, str) or not value.strip():
        return None
    v = redact_text(storable_text(value.strip()[:200]))
    return v if valid_version(v) else None


def library_id_or_none(value) -> str | None:
    # lazy: the name grammar only when an ID is checked
    from memhooks.names import checked_library_id

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
