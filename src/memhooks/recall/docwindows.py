"""The snippets a serve decision looks at, read within bytes and time (standard library only).

A document up to WHOLE_DOC_BYTES is read and cut into snippets whole
(`coverage.snippets`), exactly as it always was. A larger one (`lc-cache-write`
stores up to 16 MiB, and `MEMHOOKS_MAX_DOC_BYTES` can raise the capture cap) is
never cut or stemmed whole:

1. its first SCAN_BYTES bytes are read as UTF-8 bytes (SQLite cuts them) and
   lower-cased (ASCII, C speed);
2. for the query's most specific stems (at most ANCHORS_PER_DOC), the first
   HITS_PER_ANCHOR places where a word starts with the stem's opening letters are
   found (one literal regex scan each: C speed, and only hits reach Python);
3. around each hit, the part between the nearest separators (Context7's dashed
   lines, else `##`/`###` headings, the same rule as `coverage.snippets`) is taken,
   looked for within WINDOW_BYTES either side (a longer part is cut there at a line
   end) and cut into snippets as `coverage.part_pieces` cuts a part;
4. of those snippets, the LARGE_PIECES with the most query probes (the opening
   letters `coverage.may_cover` requires) go on to `coverage.choose`.

So the Python work per large document is bounded by those constants, not by its
size; the C work (read, lower-case, a few scans) is linear in at most SCAN_BYTES. The
serving rule is unchanged: whatever is served passes `coverage.choose` on real
snippets of the document. A large document whose every query word is common may be
answered from fewer places than a whole cut would find (a miss, never a wrong answer).
Every step checks the deadline.
"""

from memhooks.recall import coverage as cv
from memhooks.store import doc_slices, queries

WHOLE_DOC_BYTES = 256 * 1024      # read and cut whole up to this size (the exact path)
SCAN_BYTES = 16 * 1024 * 1024     # a larger document is read up to this many bytes
ANCHORS_PER_DOC = 6               # query stems searched for in one large document
HITS_PER_ANCHOR = 24              # places kept per searched stem
WINDOW_BYTES = 4 * cv.CHUNK_CHARS  # how far from a hit its part's bounds are looked for
LARGE_PIECES = 32                 # snippets of one large document passed on to choose

_RX: dict = {}


def _sep_rx():
    """Context7's separator line and a `##`/`###` heading, as bytes patterns that start with
    a literal (the engine jumps to it): the same lines `coverage` splits at."""
    if not _RX:
        import re

        _RX["sep"] = re.compile(rb"----------(?<![^\n]----------)-*+[ \t]*+$", re.MULTILINE)
        _RX["head"] = re.compile(rb"##(?<![^\n]##)#?+ ", re.MULTILINE)
    return _RX["sep"], _RX["head"]


def _word_start_rx(anchor: bytes):
    import re

    lit = re.escape(anchor)
    return re.compile(lit + rb"(?<![A-Za-z0-9]" + lit + rb")")


def anchor_of(q: str) -> str:
    """What a word covering stem `q` usually starts with: the stem less its last letter (the
    stemmer may change it: -ies -> y), at most six letters; a stem of three letters or
    fewer is the whole word."""
    return q if len(q) <= 3 else q[: min(len(q) - 1, 6)]


def pieces(conn, ranked: list[int], query: list[str], budget):
    """((doc_id, n), text) snippets of the ranked documents for `coverage.choose`, in rank
    order, and {doc_id: bytes}; None when some query stem can be in none of them."""
    sizes = doc_slices.document_sizes(conn, ranked)
    small = [d for d in ranked if d in sizes and sizes[d] <= WHOLE_DOC_BYTES]
    docs = queries.contents_by_id(conn, small)
    budget.check()
    large = {d: large_pieces(conn, d, query, budget) for d in ranked if d in sizes and d not in docs}
    texts = [docs[d]["content"] or "" for d in ranked if d in docs]
    texts += [t for got in large.values() for _, t in got]
    if not cv.may_cover(query, texts):
        return None  # some word is nowhere in these docs: no need to cut them into snippets
    budget.check()
    out: list = []
    for d in ranked:
        if d in docs:
            out += [((d, i), text) for i, text in enumerate(cv.snippets(docs[d]["content"] or ""))]
            budget.check()
        elif d in large:
            out += [((d, key), text) for key, text in large[d]]
    return out, sizes


def large_pieces(conn, doc_id: int, query: list[str], budget) -> list[tuple[tuple, str]]:
    """Up to LARGE_PIECES ((start, n), snippet) of one large document around the places its
    words start with the query's anchors, those with the most query probes first kept,
    returned in document order."""
    raw = doc_slices.document_head_bytes(conn, doc_id, SCAN_BYTES)
    budget.check()
    low = raw.lower()
    budget.check()
    anchors = sorted({anchor_of(q).encode("utf-8", "surrogatepass") for q in query},
                     key=lambda a: (-len(a), a))[:ANCHORS_PER_DOC]
    hits: set[int] = set()
    for anchor in anchors:
        for n, m in enumerate(_word_start_rx(anchor).finditer(low)):
            if n >= HITS_PER_ANCHOR:
                break
            hits.add(m.start())
        budget.check()
    if not hits:
        return []
    sep, head = _sep_rx()
    # The whole-document rule: separators when the document has one, else headings.
    first = raw.find(b"----------")
    by_sep = first >= 0 and sep.search(raw, first) is not None
    budget.check()
    probes = cv.probes(query)
    scored, end = [], -1
    for i in sorted(hits):
        if i < end:
            continue  # inside the part already taken
        a, b = part_bounds(raw, i, sep if by_sep else head, by_sep)
        end = b
        text = raw[a:b].decode("utf-8", "ignore").strip("\n")
        for n, piece in enumerate(cv.part_pieces(text)):
            low_piece = piece.lower()
            score = sum(1 for p in probes if cv.starts_a_word(low_piece, p))
            if score:
                scored.append((-score, a, n, piece))
        budget.check()
    best = sorted(scored)[:LARGE_PIECES]
    return [((a, n), piece) for _, a, n, piece in sorted(best, key=lambda s: (s[1], s[2]))]


def part_bounds(raw: bytes, i: int, bound, by_sep: bool) -> tuple[int, int]:
    """Byte offsets of the part around offset `i`: after the last boundary before it (a
    separator line ends the part before it; a heading starts its own) and up to the next
    one, looked for within WINDOW_BYTES; a bound not found there is the first or last line
    end inside the window (or the document's own start or end)."""
    lo, hi = max(0, i - WINDOW_BYTES), min(len(raw), i + WINDOW_BYTES)
    a = b = None
    for m in bound.finditer(raw, lo, hi):
        if m.start() <= i:
            a = m.end() if by_sep else m.start()
        elif m.start() > i:
            b = m.start()
            break
    if a is None:
        a = 0 if lo == 0 else raw.find(b"\n", lo, i) + 1 or i
    if b is None:
        b = len(raw) if hi == len(raw) else raw.rfind(b"\n", i, hi)
        b = hi if b < 0 else b
    return a, b
