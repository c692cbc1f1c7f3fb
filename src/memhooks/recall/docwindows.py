"""The snippets a serve decision looks at, read within bytes and time (standard library only).

A document up to WHOLE_DOC_BYTES is read and cut into snippets whole
(`coverage.snippets`), exactly as it always was. A larger one (`lc-cache-write`
stores up to 16 MiB, and `MEMHOOKS_MAX_DOC_BYTES` can raise the capture cap) is
never cut or stemmed whole:

1. the FTS index of the large documents says which of them hold a word starting with each
   query stem's anchor (its opening letters; anchors of four letters or more, as FTS
   prefixes are never shorter here); an anchor that none of the ranked documents can hold
   (no large one holds it and none is small) ends the decision there (no document is
   scanned);
2. the document's first SCAN_BYTES bytes are read as UTF-8 bytes (SQLite cuts them),
   lower-cased (ASCII, C speed), and for the anchors it holds (the most specific
   first, at most ANCHORS_PER_DOC) the first HITS_PER_ANCHOR places where a word starts
   with one are found (a literal regex scan each: C speed; only hits reach Python);
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

import re
import time
from itertools import islice

from memhooks.recall import coverage as cv
from memhooks.store import doc_slices

WHOLE_DOC_BYTES = doc_slices.INDEXED_BYTES  # read and cut whole up to this size (the exact path)
SCAN_BYTES = 16 * 1024 * 1024     # a larger document is read up to this many bytes
ANCHORS_PER_DOC = 6               # query stems searched for in one large document
HITS_PER_ANCHOR = 24              # places kept per searched stem
WINDOW_BYTES = 4 * cv.CHUNK_CHARS  # how far from a hit its part's bounds are looked for
LARGE_PIECES = 32                 # snippets of one large document passed on to choose
FTS_PREFIX_MIN = doc_slices.PREFIX_MIN_CHARS  # shorter anchors are not looked up in FTS

_RX: dict = {}


def _sep_rx():
    """Context7's separator line and a `##`/`###` heading, as bytes patterns that start with
    a literal (the engine jumps to it): the same lines `coverage` splits at."""
    if not _RX:
        _RX["sep"] = re.compile(rb"----------(?<![^\n]----------)-*+[ \t]*+$", re.MULTILINE)
        _RX["head"] = re.compile(rb"##(?<![^\n]##)#?+ ", re.MULTILINE)
    return _RX["sep"], _RX["head"]


def _word_start_rx(anchor: bytes):
    lit = re.escape(anchor)
    return re.compile(lit + rb"(?<![A-Za-z0-9]" + lit + rb")")


def anchor_of(q: str) -> str:
    """What a word covering stem `q` starts with, nearly always (the stemmer may change a
    stem's last letter: -ies -> y): a stem of four letters or fewer whole, else the stem
    less its last letter, at most six letters."""
    return q if len(q) <= 4 else q[: min(len(q) - 1, 6)]


def pieces(conn, ranked: list[int], query: list[str], budget):
    """((doc_id, n), text) snippets of the ranked documents for `coverage.choose`, in rank
    order; None when some query stem can be in none of them. Documents are read one at a
    time; once a large one is met, the FTS index says which documents hold each anchor
    (an anchor no document holds: None at once, nothing scanned). Once one snippet covers
    every stem, later documents are not read: `choose` would take that snippet alone."""
    small: dict[int, str] = {}
    large: dict[int, list] = {}
    holders: dict[str, set[int]] | None = None
    step = 0.0  # what reading and searching one large document took: not begun when it cannot fit
    for d in ranked:
        budget.check(step)
        began = time.monotonic()
        raw = doc_slices.document_head_bytes(conn, d, SCAN_BYTES)
        budget.check()
        if raw is None:
            continue
        if len(raw) <= WHOLE_DOC_BYTES:
            small[d] = raw.decode("utf-8", "replace")
            continue
        if holders is None:
            # The index holds the large documents only: a small one may hold any anchor.
            small_ids = {i for i, n in doc_slices.document_sizes(conn, ranked).items()
                         if n <= doc_slices.INDEXED_BYTES}
            holders = {a: doc_slices.documents_with_word(conn, a, ranked) | small_ids
                       if len(a) >= FTS_PREFIX_MIN else set(ranked)
                       for a in anchors(query)}  # (a short one: not asked, kept)
            budget.check()
            if not all(holders.values()):
                return None  # a word no document has: nothing to cover it with
        mine = [a for a, docs in holders.items() if d in docs][:anchors_per_doc(len(query))]
        large[d], whole = large_pieces(raw, mine, query, budget)
        del raw
        step = max(step, time.monotonic() - began)
        if whole:
            break
    texts = [small[d] for d in ranked if d in small] + [t for got in large.values() for _, t in got]
    if not cv.may_cover(query, texts):
        return None  # some word is nowhere in these docs: no need to cut them into snippets
    budget.check()
    out: list = []
    for d in ranked:
        if d in small:
            out += [((d, i), text) for i, text in enumerate(cv.snippets(small[d]))]
            budget.check()
        elif d in large:
            out += [((d, key), text) for key, text in large[d]]
    return out


def sizes(conn, ids: list[int]) -> dict[int, int]:
    """id -> stored bytes (what the live call would have brought), for the served documents."""
    return doc_slices.document_sizes(conn, ids)


def anchors_per_doc(stems: int) -> int:
    """How many anchors one large document is searched for: half the stems and one more
    (at most ANCHORS_PER_DOC). The first snippet served covers at least half the stems, so
    it holds one of any half-and-one of them: searching that many finds it."""
    return min(ANCHORS_PER_DOC, stems // 2 + 1)


def anchors(query: list[str]) -> list[str]:
    """The query stems' anchors, the most specific (longest) first."""
    return sorted(dict.fromkeys(anchor_of(q) for q in query), key=lambda a: (-len(a), a))


def large_pieces(raw: bytes, found: list[str], query: list[str], budget) -> tuple[list, bool]:
    """Up to LARGE_PIECES ((start, n), snippet) of one large document (its first bytes
    `raw`) around the places where its words start with the anchors `found`, those with
    the most query probes kept, in document order; and whether one of them covers every
    stem (then the remaining anchors are not searched for)."""
    if not found:
        return [], False
    low = raw.lower()
    budget.check()
    sep, head = _sep_rx()
    # The whole-document rule: separators when the document has one, else headings.
    first = raw.find(b"----------")
    by_sep = first >= 0 and sep.search(raw, first) is not None
    probes = cv.probes(query)
    scored: list = []
    taken: list[tuple[int, int]] = []
    whole, step = False, 0.0
    for anchor in found:
        budget.check(step)
        began = time.monotonic()
        rx = _word_start_rx(anchor.encode("utf-8", "surrogatepass"))
        hits = [m.start() for m in islice(rx.finditer(low), HITS_PER_ANCHOR)]
        step = max(step, time.monotonic() - began)
        for i in hits:
            if any(a <= i < b for a, b in taken):
                continue  # inside a part already taken
            a, b = part_bounds(raw, i, sep if by_sep else head, by_sep)
            taken.append((a, b))
            text = raw[a:b].decode("utf-8", "ignore").strip("\n")
            for n, piece in enumerate(cv.part_pieces(text)):
                low_piece = piece.lower()
                score = sum(1 for p in probes if cv.starts_a_word(low_piece, p))
                if score:
                    scored.append((-score, a, n, piece))
                if score == len(probes) and not whole:
                    whole = cv.choose(query, [((a, n), piece)], max_pieces=1) is not None
            budget.check()
        if whole:
            break
    best = sorted(scored)[:LARGE_PIECES]
    return [((a, n), piece) for _, a, n, piece in sorted(best, key=lambda s: (s[1], s[2]))], whole


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
