"""Queries as people write them, as FTS5 queries over sections (standard library only; no `re`).

Search (memhooks.recall.search) and the serve decision (memhooks.recall.serve) build their
full-text queries here, so both rank the same way.

* A query's words are runs of letters and digits (FTS5's unicode61 notion of a word).
* Stop words and question words ("how", "does", "vs", "the", ...) need not match: they are
  dropped unless nothing else is left.
* An identifier (`db.atomic`, `get_model`, `@vitejs/plugin-react`, `std::vector`,
  `--fetch-python`) is one term: the phrase of its parts in order. A camelCase word
  (`useEffect`) is one token for FTS5 already and matches as written.
* `all_words`: every term (AND); `any_word`: any term (OR), which BM25 ranks by how much of
  the query a section holds. The index stems (porter), so "render" finds "rendering";
  search ranks first the pages whose hit section holds the terms as written.

No user text ever reaches FTS5 as syntax: every term is an FTS5 string (`"` doubled).
"""

from __future__ import annotations

from memhooks.recall.coverage import STOP_WORDS
from memhooks.recall.coverage import tokens as words  # runs of letters and digits

MAX_TERMS = 16
PREFIX_MIN = 4
MAX_QUERY = 2000
# Words that only say how a question is asked (besides memhooks.recall.coverage's stop words).
EXTRA_STOP = frozenset("versus compared compare comparison difference differences differ "
                       "vs choose pick prefer option should could would".split())
_JOINERS = frozenset("._/-:@$#~+")


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _chunks(text: str) -> list[str]:
    """Whitespace-separated pieces, with brackets, quotes and commas as separators too."""
    for ch in "()[]{}<>\"'`,;!?=*|&^%":
        text = text.replace(ch, " ")
    return text.split()


class Query:
    """One query's terms: `terms` (lower-case phrases of one or more words, stop words dropped),
    `all_words`, `any_word` and `prefixed` (FTS5 queries, or None when there are no terms)."""

    def __init__(self, text: str, ignore: frozenset[str] | set[str] = frozenset()):
        text = (text or "")[:MAX_QUERY]
        terms: list[tuple[str, ...]] = []
        plain: list[tuple[str, ...]] = []
        for chunk in _chunks(text):
            parts = [w.lower() for w in words(chunk)]
            if not parts:
                continue
            inner = chunk.strip("".join(_JOINERS))
            if len(parts) > 1 and any(c in _JOINERS for c in inner):
                term = tuple(parts)  # an identifier: its parts as one phrase
                if term not in terms:
                    terms.append(term)
                continue
            for w in parts:
                t = (w,)
                if t not in plain:
                    plain.append(t)
                if w in STOP_WORDS or w in EXTRA_STOP or w in ignore or t in terms:
                    continue
                terms.append(t)
        if not terms:
            terms = [t for t in plain if t[0] not in ignore] or plain
        self.terms = terms[:MAX_TERMS]
        self.identifiers = [t for t in self.terms if len(t) > 1]

    def _join(self, op: str) -> str | None:
        if not self.terms:
            return None
        return f" {op} ".join(_quoted(" ".join(t)) for t in self.terms)

    @property
    def all_words(self) -> str | None:
        return self._join("AND")

    @property
    def any_word(self) -> str | None:
        """Any term, an identifier's parts counting as words of their own too."""
        if not self.terms:
            return None
        parts = list(dict.fromkeys([" ".join(t) for t in self.terms] +
                                   [w for t in self.identifiers for w in t
                                    if w not in STOP_WORDS and w not in EXTRA_STOP]))
        return " OR ".join(_quoted(p) for p in parts)

    @property
    def prefixed(self) -> str | None:
        """Any term, those of PREFIX_MIN or more letters as prefixes (`"confi"*`): the last
        resort before a substring search."""
        if not self.terms:
            return None
        return " OR ".join(_quoted(" ".join(t)) + ("*" if len(t[-1]) >= PREFIX_MIN else "")
                           for t in self.terms)

    @property
    def single(self) -> bool:
        return len(self.terms) == 1
