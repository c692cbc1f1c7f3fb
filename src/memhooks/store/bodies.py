"""Document texts as the store keeps them (standard library only; a leaf).

`documents.body` holds a document's text as zlib-compressed UTF-8 (migration m012): the
store keeps each text once, and documentation compresses about 3x. Every connection memhooks
opens to a store defines the SQL function `document_text(body)` (`add_functions`), through
which the readers, the view `document_texts` and so the FTS5 index and its triggers see the
text. A tool that opens the file without it can read every other column; `memhooks show`,
`search` and `export` give the texts.
"""

import sqlite3
import zlib

from memhooks.sections import spans_json

_LAST: list = [None, None]  # the last body document_text read, and its text


def add_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions every connection to a store has: `document_text(body)`, the text of
    a document (which the FTS index and the readers see through the view document_texts)."""
    conn.create_function("document_text", 1, document_text, deterministic=True)
    conn.create_function("document_head", 2, document_head, deterministic=True)
    # One section's text (the view section_texts, the triggers that index sections).
    conn.create_function("document_slice", 3, document_slice, deterministic=True)
    # A text's sections (memhooks.sections) as JSON: the triggers that keep `sections` read it.
    conn.create_function("memhooks_sections", 1, spans_json, deterministic=True)


def document_body(text: str) -> bytes:
    """What `documents.body` keeps of a text: its UTF-8 bytes, zlib-compressed (documentation
    compresses about 3x; a store keeps each text once, so this is most of its size)."""
    return zlib.compress(text.encode("utf-8"), 6)


def document_text(body) -> str | None:
    """The text of a `documents.body` (None stays None). Never raises: a body that does not
    decompress reads as empty text (SQL would otherwise fail the whole statement)."""
    if body is None or isinstance(body, str):
        return body
    if body == _LAST[0]:
        return _LAST[1]  # a document's sections read its text once per section: decompress once
    try:
        text = zlib.decompress(body).decode("utf-8", "replace")
    except (zlib.error, TypeError, ValueError, MemoryError):
        return ""
    _LAST[:] = [body, text]
    return text


def document_slice(body, start, length) -> str | None:
    """`length` characters of a document's text from character `start` (0-based; what
    substr(text, start + 1, length) gives), slicing the text decompressed once for all of a
    document's sections instead of handing SQLite the whole text for each."""
    text = document_text(body)
    if text is None:
        return None
    if not isinstance(start, int) or not isinstance(length, int) or start < 0 or length <= 0:
        return ""
    return text[start:start + length]


def document_head(body, limit) -> bytes:
    """The first `limit` bytes of a document's UTF-8 text, decompressing only that much (the
    serve decision's bounded read of a large document). A cut may split a character."""
    if body is None or not isinstance(limit, int) or limit <= 0:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")[:limit]
    try:
        return zlib.decompressobj().decompress(body, limit)
    except (zlib.error, TypeError, ValueError, MemoryError):
        return b""
