"""Does captured text cover a question? Words, a tiny stemmer, snippets (standard library only).

Used by the serve decision: a query's content words (stop words and the
library's own name dropped, stemmed) must all be found in a few snippets of
the captured docs. Precision comes first, so there is no fuzzy matching beyond
the stemmer and a shared prefix of five or more letters.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `re` (and `enum`) load in _res() on first use: here for annotations only
if TYPE_CHECKING:
    import re
    from typing import TypeVar

    K = TypeVar("K")  # a piece's key, whatever the caller uses

_RES: list[re.Pattern[str]] = []


def _res() -> list[re.Pattern[str]]:
    """(word, snippet separator, heading) patterns, compiled on first use: `re` (and `enum`)
    is the largest import of a hook run, and a query alone is split without it."""
    if not _RES:
        _RES.extend((re.compile(r"[^\W_]+"),
                     # Context7 separates snippets with a line of dashes; `### ` starts one too.
                     re.compile(r"^-{10,}[ \t]*$", re.MULTILINE),
                     re.compile(r"^(?=#{2,3} )", re.MULTILINE)))
    return _RES


def tokens(text: str) -> list[str]:
    """Runs of letters and digits (what `[^\\W_]+` finds), without `re`: for short texts."""
    out, cur = [], []
    for ch in text:
        if ch.isalnum():
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out

MAX_WORD_CHARS = 64
PREFIX_MIN = 5
CHUNK_CHARS = 3000  # a snippet longer than twice this is cut at blank lines

_STOP_TEXT = """
a about above after again all also am an and any are as at be because been before being below
between both but by can could did do does doing done down during each either else etc ever every
few for from further had has have having he her here hers how i if in into is it its itself just
let lets like may me might more most much must my no nor not now of off on once one only or other
our ours out over own per please same shall she should show so some such than that the their them
then there these they this those through to too two under until up upon us very via vs want was
way ways we were what whats when where whether which while who whom why will with within would yes
you your yours
use uses used using usage example examples doc docs documentation guide tutorial library libraries
package packages get gets getting make makes making need needs needed tell explain help best
practice practices correct correctly properly proper right instead thing things something work
works working question answer another several many various certain
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

_SUFFIXES = (("ization", ""), ("isation", ""), ("ational", "ate"), ("ation", ""), ("ness", ""),
             ("ment", ""), ("able", ""), ("ible", ""), ("ize", ""), ("ise", ""), ("ly", ""),
             ("ate", ""), ("er", ""))


def stem(word: str) -> str:
    """A small Porter-like stemmer: plural, -ing/-ed, common derivational endings, final e."""
    w = word.lower()
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suf in ("ing", "ed"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            break
    for suf, rep in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)] + rep
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def words(text: str) -> list[str]:
    """Lower-case words of `text` (an identifier such as `useEffect` stays one word: its
    parts would let scattered code tokens cover a question they do not answer)."""
    found = tokens(text) if len(text) <= 500 else _res()[0].findall(text)
    return [tok.lower() for tok in found if len(tok) <= MAX_WORD_CHARS]


def stems(text: str, heads: set[str] | None = None) -> set[str]:
    """Stems of the distinct words of `text`; with `heads`, only of words starting with one
    of those two-letter heads (a stem keeps its word's first two letters, so a query stem
    can only be covered by such words: stemming the rest would be wasted)."""
    distinct = set(words(text))
    if heads is not None:
        distinct = {w for w in distinct if w[:2] in heads}
    return {stem(w) for w in distinct}


def query_stems(query: str, ignore: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The content words of a question, stemmed, in order, without duplicates."""
    out: list[str] = []
    for tok in tokens(query):
        low = tok.lower()
        if len(low) < 2 or len(low) > MAX_WORD_CHARS or low in STOP_WORDS or low in ignore:
            continue
        s = stem(low)
        if s not in out and s not in ignore:
            out.append(s)
    return out


# What may follow a shared prefix: inflections the stemmer left (configur|ation, config|ure).
_TAILS = frozenset(("", "s", "e", "es", "ed", "ing", "er", "ers", "or", "ur", "ure", "ation", "ion",
                    "ions", "al", "ally", "ly", "ive", "ment", "able", "ity", "ize", "ise", "y",
                    "ies", "ic", "ist"))


def covers(q: str, have: set[str]) -> bool:
    """The stem itself, or a word sharing a prefix of PREFIX_MIN+ letters followed only by
    an inflection (`config` ~ `configur`, but `async` is not `asyncpg`)."""
    if q in have:
        return True
    if len(q) < PREFIX_MIN:
        return False
    for h in have:
        if len(h) < PREFIX_MIN:
            continue
        if (h.startswith(q) and h[len(q):] in _TAILS) or (q.startswith(h) and q[len(h):] in _TAILS):
            return True
    return False


def may_cover(query: list[str], texts: list[str]) -> bool:
    """A cheap necessary condition for `choose` (no `re`): every query stem's opening letters
    begin a word somewhere in the texts. A covering word's stem shares the stem's first
    min(len, 5) letters, and a stem differs from its word at most in its last letter
    (-ies -> -y, -ational -> -ate), so the word holds the first min(len, 5) - 1 of them."""
    low = [t.lower() for t in texts]
    for probe in probes(query):
        if not any(starts_a_word(t, probe) for t in low):
            return False
    return True


def probes(query: list[str]) -> list[str]:
    """Per query stem, the opening letters a covering word must start with (see may_cover)."""
    return [p for p in (q[: min(len(q), PREFIX_MIN) - 1] for q in query) if p]


def starts_a_word(text: str, probe: str) -> bool:
    """`probe` at the start of a word of `text` (after a character that is not a letter or
    digit): where a covering word would have it."""
    i = text.find(probe)
    while i >= 0:
        if i == 0 or not text[i - 1].isalnum():
            return True
        i = text.find(probe, i + 1)
    return False


def snippets(text: str) -> list[str]:
    """Split a captured docs body into snippets (Context7's separators, else headings)."""
    _, sep_re, heading_re = _res()
    parts = [p.strip("\n") for p in sep_re.split(text)]
    if len(parts) == 1:
        parts = [p.strip("\n") for p in heading_re.split(text)]
    return [piece for p in parts for piece in part_pieces(p)]


def part_pieces(p: str) -> list[str]:
    """One part between separators (or headings) as snippets: whole, or, when longer than
    twice CHUNK_CHARS, cut at blank lines into pieces of about CHUNK_CHARS."""
    if not p.strip():
        return []
    if len(p) <= 2 * CHUNK_CHARS:
        return [p]
    out: list[str] = []
    chunk = ""
    for para in p.split("\n\n"):
        if chunk and len(chunk) + len(para) > CHUNK_CHARS:
            out.append(chunk)
            chunk = ""
        chunk = f"{chunk}\n\n{para}" if chunk else para[: 2 * CHUNK_CHARS]
    if chunk.strip():
        out.append(chunk)
    return out


def choose(query: list[str], pieces: list[tuple[K, str]], *, max_pieces: int = 3,
           primary_share: float = 0.5, check=None) -> list[tuple[K, str]] | None:
    """Pick up to `max_pieces` (key, text) pieces that together cover every query stem.

    The first piece must cover at least `primary_share` of the stems (the
    answer is mostly in one place); each further piece must add a stem.
    Returns the chosen pieces in their original order, or None. `check`, when
    given, is called before each piece is stemmed (the serve budget raises there).
    """
    if not query or not pieces:
        return None
    cover = []
    heads = {q[:2] for q in query}
    for i, (_key, text) in enumerate(pieces):
        if check is not None:
            check()
        have = stems(text, heads)
        got = frozenset(q for q in query if covers(q, have))
        if got:
            cover.append((i, got))
    if not cover:
        return None
    wanted = set(query)
    best = max(cover, key=lambda c: (len(c[1]), -c[0]))
    if len(best[1]) < max(1, primary_share * len(query)):
        return None
    chosen, left = [best[0]], wanted - best[1]
    while left and len(chosen) < max_pieces:
        nxt = max(cover, key=lambda c: (len(c[1] & left), -c[0]))
        if not nxt[1] & left:
            break
        chosen.append(nxt[0])
        left -= nxt[1]
    if left:
        return None
    return [pieces[i] for i in sorted(chosen)]
