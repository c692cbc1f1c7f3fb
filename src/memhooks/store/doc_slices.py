"""Bounded reads of captured text for the serve decision (standard library only; the
PreToolUse hook imports it).

The serve decision reads at most a fixed number of bytes of a document (`document_head`,
which decompresses no more of the stored text than that), and asks the FTS
index, not the text, which documents hold a word. Every value is bound as a parameter.
"""

import sqlite3

from memhooks.store.queries import PREFIX_MIN_CHARS, fts_term

__all__ = ["INDEXED_BYTES", "PREFIX_MIN_CHARS", "document_head_bytes", "document_sizes",
           "documents_with_word"]

# documents_fts indexes the documents larger than this (UTF-8 bytes of the stored text: the
# `bytes` column), the ones the serve decision does not read whole (migration m019).
INDEXED_BYTES = 256 * 1024


def document_head_bytes(conn, doc_id: int, limit: int) -> bytes | None:
    """The first `limit` bytes of a document's text, UTF-8; None when there is no such
    document. A cut may split a character: decode with errors="ignore"."""
    row = conn.execute("SELECT document_head(body, ?) FROM documents WHERE id = ?",
                       (int(limit), doc_id)).fetchone()
    return None if row is None else bytes(row[0] or b"")


def document_sizes(conn, ids: list[int]) -> dict[int, int]:
    """id -> the `bytes` column (size of the stored text), for the ids that exist."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {int(i): int(n or 0) for i, n in conn.execute(
        f"SELECT id, bytes FROM documents WHERE id IN ({marks})", list(ids))}


def documents_with_word(conn, prefix: str, ids: list[int]) -> set[int]:
    """Those of `ids` whose title or text has a word starting with `prefix` (FTS5; a prefix
    shorter than PREFIX_MIN_CHARS only as a whole word, as every FTS query here). Only the
    documents over INDEXED_BYTES are indexed: a smaller one is never in the answer."""
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    match = fts_term(prefix, len(prefix) >= PREFIX_MIN_CHARS)
    try:
        return {int(r[0]) for r in conn.execute(
            "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?"
            f" AND +rowid IN ({marks})", (match, *ids))}
    except sqlite3.OperationalError:
        # FTS5 reads a prefix it splits into more than one word as a phrase, which an index
        # without positions refuses: then every document may hold it (its text is searched).
        return set(ids)
