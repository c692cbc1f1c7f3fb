"""Bounded reads of captured text for the serve decision (standard library only; the
PreToolUse hook imports it).

The serve decision reads a document whole only when it is small; of a large one it
reads at most a fixed number of bytes (`substr` on the UTF-8 blob, so the bound is in
bytes and SQLite does the cutting). Every value is bound as a parameter.
"""


def document_sizes(conn, ids: list[int]) -> dict[int, int]:
    """id -> size of the stored text in bytes, for the ids that exist (the `bytes`
    column; measured for a row that lacks it)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute("SELECT id, coalesce(bytes, length(CAST(content AS BLOB)), 0) FROM documents"
                        f" WHERE id IN ({marks})", list(ids))
    return {int(i): int(n) for i, n in rows}


def document_head_bytes(conn, doc_id: int, limit: int) -> bytes:
    """The first `limit` bytes of a document's text, UTF-8 (b'' when there is none). A cut
    may split a character: decode with errors="ignore"."""
    row = conn.execute("SELECT substr(CAST(content AS BLOB), 1, ?) FROM documents WHERE id = ?",
                       (int(limit), doc_id)).fetchone()
    return bytes(row[0]) if row and row[0] is not None else b""
