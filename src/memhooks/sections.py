"""A document's sections: the unit search ranks (standard library only; a leaf, no `re`).

A stored text is markdown-like (captured docs, and pages `memhooks add` turned from HTML
into `#` headings). It is split at its ATX headings (`#` to `######` then a space, outside
``` / ~~~ fences): a section runs from its heading to the next one, the text before the first
heading is a section of its own. Each section keeps its heading path (the headings above it,
outermost first, joined by `SEP`) and the URL anchor its heading names, where the source
has one: `{#id}` after the heading text (MyST, Pandoc, kramdown, and what memhooks.ingest.pages
keeps of an HTML heading's id), or an `<a id=…>` / `<a name=…>` in the heading line.

A section is at most `MAX_CHARS` characters: a longer one is cut at blank lines (else at
`MAX_CHARS`) into parts with the same path and anchor. A text has at most `MAX_SECTIONS`
sections; the last one then runs to the end (bounded rows for hostile text). One forward
scan over the lines: linear in the text.

`spans(text)` gives (start, length, path, anchor) in characters (code points, as SQLite's
substr counts them); `spans_json(text)` is the SQL function `memhooks_sections(text)` that
the store's triggers read with json_each (memhooks.store.bodies registers it).
"""

from __future__ import annotations

MAX_CHARS = 4000
MIN_CUT = 1000          # a part cut from a long section is at least this long
MAX_SECTIONS = 2000
MAX_HEADING = 300       # characters of a heading kept in a path
MAX_ANCHOR = 200
SEP = " > "
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


def heading(line: str) -> tuple[int, str, str | None] | None:
    """(level, text, anchor) of an ATX heading line, or None."""
    level = 0
    while level < len(line) and level < 7 and line[level] == "#":
        level += 1
    if not 1 <= level <= 6 or len(line) <= level or line[level] not in " \t":
        return None
    text = line[level:].strip()
    # a closing run of #s (`## Title ##`) is not part of the title
    stripped = text.rstrip("#")
    if stripped != text and (not stripped or stripped[-1] in " \t"):
        text = stripped.rstrip()
    anchor = None
    if text.endswith("}"):
        k = text.rfind("{#")
        if k >= 0 and _is_id(text[k + 2:-1]):
            anchor, text = text[k + 2:-1], text[:k].rstrip()
    if anchor is None:
        anchor, text = _html_anchor(text)
    text = " ".join(text.rstrip("¶").split())[:MAX_HEADING]  # (a permalink's pilcrow)
    return level, text, anchor


def _is_id(value: str) -> bool:
    return 0 < len(value) <= MAX_ANCHOR and all(c in _ID_CHARS for c in value)


def _html_anchor(text: str) -> tuple[str | None, str]:
    """An `<a id="x">` or `<a name="x">` in a heading: (x, the heading without the tag)."""
    low = text.lower()
    k = low.find("<a ")
    if k < 0:
        return None, text
    end = low.find(">", k)
    if end < 0:
        return None, text
    tag = text[k:end]
    for attr in ("id=", "name="):
        j = tag.lower().find(attr)
        if j < 0:
            continue
        value = tag[j + len(attr):].strip()
        if value[:1] in "\"'":
            q = value[0]
            value = value[1:value.find(q, 1)] if value.find(q, 1) > 0 else ""
        else:
            value = value.split()[0] if value.split() else ""
        if _is_id(value):
            rest = text[:k] + text[end + 1:]
            close = rest.lower().find("</a>")
            if close >= 0:
                rest = rest[:close] + rest[close + 4:]
            return value, rest.strip()
    return None, text


def _cut(start: int, end: int, text: str) -> list[tuple[int, int]]:
    """[start, end) as parts of at most MAX_CHARS, cut at a blank line where there is one."""
    out = []
    while end - start > MAX_CHARS:
        limit = start + MAX_CHARS
        cut = text.rfind("\n\n", start + MIN_CUT, limit)
        cut = limit if cut < 0 else cut + 2
        out.append((start, cut))
        start = cut
    out.append((start, end))
    return out


def spans(text: str) -> list[tuple[int, int, str, str | None]]:
    """(start, length, heading path, anchor) of each section of `text`, in order."""
    if not isinstance(text, str) or not text:
        return []
    heads: list[tuple[int, int, str, str | None]] = []  # (offset, level, title, anchor)
    fence = ""
    pos, n = 0, len(text)
    while pos < n and len(heads) < MAX_SECTIONS:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        line = text[pos:end]
        st = line.lstrip(" ")
        if st.startswith(("```", "~~~")) and len(line) - len(st) < 4:
            mark = st[:3]
            if not fence:
                fence = mark
            elif mark == fence and not st[3:].strip(mark[0]).strip():
                fence = ""
        elif not fence and line.startswith("#"):
            h = heading(line)
            if h is not None:
                heads.append((pos, *h))
        pos = end + 1
    out: list[tuple[int, int, str, str | None]] = []
    stack: list[tuple[int, str]] = []
    starts = [h[0] for h in heads] + [n]
    if not heads or heads[0][0] > 0:
        first = starts[0]
        if text[:first].strip():
            out += [(a, b - a, "", None) for a, b in _cut(0, first, text)]
    for i, (offset, level, title, anchor) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        path = SEP.join(t for _, t in stack if t)
        out += [(a, b - a, path, anchor) for a, b in _cut(offset, starts[i + 1], text)]
    return out


def spans_json(text) -> str:
    """The SQL function `memhooks_sections(text)`: spans as a JSON array of
    [start, length, path, anchor] (ASCII: a lone surrogate in a heading stays an escape).
    Never raises (a text it cannot read has no sections)."""
    import json  # only where documents are written: every store connection registers this

    try:
        return json.dumps([list(s) for s in spans(text if isinstance(text, str) else "")])
    except (ValueError, TypeError, RecursionError, MemoryError):
        return "[]"
