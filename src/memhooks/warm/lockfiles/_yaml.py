"""A small YAML-subset reader: enough for pnpm-lock.yaml, pnpm-workspace.yaml and yarn berry locks.

Supports block mappings and sequences (including ``- key: value`` items and sequences
at the same indent as their key), single/double-quoted and plain scalars, flow
collections (``{a: 1, b: [x, y]}``, possibly spanning lines), block scalars
(``|``/``>``), comments and ``---`` document markers. Every scalar comes back as a
``str`` (no int/bool/null typing) except an empty value, which is ``None``.
Anchors, aliases, tags, complex keys and multiple documents are not supported.
Malformed input raises ``YAMLError`` (a ``ValueError``).
"""

from __future__ import annotations

import re

__all__ = ["loads", "YAMLError"]


class YAMLError(ValueError):
    pass


def loads(text: str):
    lines = []
    for raw in text.splitlines():
        st = raw.lstrip(" ")
        if not st or st[0] == "#":
            continue
        st = st.rstrip()
        if not st:
            continue
        if st in ("---", "...") and len(raw) == len(st):
            continue
        if st[0] == "\t":
            raise YAMLError("tab indentation")
        lines.append((len(raw) - len(raw.lstrip(" ")), st))
    if not lines:
        return None
    p = _Parser(lines)
    first = lines[0][1]
    if first[0] in "[{":  # a flow document (JSON is one)
        p.i = 1
        out = p.value(first, -1)
    else:
        out = p.block(lines[0][0])
    if p.i < p.n:
        raise YAMLError(f"unexpected content at line {p.i}: {p.lines[p.i][1][:40]!r}")
    return out


def _is_seq(t: str) -> bool:
    return t == "-" or t.startswith("- ")


def _quoted(s: str, i: int) -> tuple[str, int]:
    """Parse a quoted scalar starting at s[i] (a quote). Returns (value, index after it)."""
    q = s[i]
    j = i + 1
    n = len(s)
    if q == "'":
        parts = []
        while True:
            k = s.find("'", j)
            if k < 0:
                raise YAMLError("unterminated single-quoted scalar")
            parts.append(s[j:k])
            if k + 1 < n and s[k + 1] == "'":
                parts.append("'")
                j = k + 2
                continue
            return "".join(parts), k + 1
    # double quotes
    k = s.find('"', j)
    if k < 0:
        raise YAMLError("unterminated double-quoted scalar")
    if "\\" not in s[j:k]:
        return s[j:k], k + 1
    out: list[str] = []
    while j < n:
        c = s[j]
        if c == '"':
            return "".join(out), j + 1
        if c == "\\":
            j += 1
            if j >= n:
                break
            e = s[j]
            if e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                try:
                    out.append(chr(int(s[j + 1 : j + 1 + width], 16)))
                except ValueError as exc:
                    raise YAMLError("bad escape") from exc
                j += 1 + width
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0", "/": "/", " ": " "}.get(e, e))
            j += 1
            continue
        out.append(c)
        j += 1
    raise YAMLError("unterminated double-quoted scalar")


def _split_key(t: str) -> tuple[str, str] | None:
    """Split a mapping line into (key, rest) or None when it is not ``key: ...``."""
    if t[0] in "\"'":
        key, j = _quoted(t, 0)
        rest = t[j:].lstrip(" ")
        if rest.startswith(":") and (len(rest) == 1 or rest[1] == " "):
            return key, rest[1:].lstrip(" ")
        return None
    if t[0] in "[{":
        return None
    k = t.find(": ")
    if k < 0:
        if t.endswith(":"):
            return t[:-1].rstrip(), ""
        return None
    # a trailing comment before the colon means there is no key
    c = t.find(" #")
    if 0 <= c < k:
        return None
    return t[:k].rstrip(), t[k + 2 :].lstrip(" ")


def _plain(s: str) -> str | None:
    c = s.find(" #")
    if c >= 0:
        s = s[:c].rstrip()
    if s in ("", "~", "null"):
        return None
    return s


class _Parser:
    __slots__ = ("lines", "i", "n")

    def __init__(self, lines):
        self.lines = lines
        self.i = 0
        self.n = len(lines)

    def block(self, indent: int):
        if _is_seq(self.lines[self.i][1]):
            return self.seq(indent)
        return self.mapping(indent)

    def mapping(self, indent: int) -> dict:
        d: dict = {}
        lines = self.lines
        while self.i < self.n:
            ind, t = lines[self.i]
            if ind < indent:
                break
            if ind > indent:
                raise YAMLError(f"bad indentation at line {self.i}: {t[:40]!r}")
            if _is_seq(t):
                break
            kv = _split_key(t)
            if kv is None:
                raise YAMLError(f"expected a mapping key at line {self.i}: {t[:40]!r}")
            self.i += 1
            d[kv[0]] = self.value(kv[1], indent)
        return d

    def seq(self, indent: int) -> list:
        out: list = []
        lines = self.lines
        while self.i < self.n:
            ind, t = lines[self.i]
            if ind != indent or not _is_seq(t):
                if ind > indent:
                    raise YAMLError(f"bad indentation at line {self.i}")
                break
            body = t[1:].lstrip(" ")
            if not body:
                self.i += 1
                if self.i < self.n and lines[self.i][0] > indent:
                    out.append(self.block(lines[self.i][0]))
                else:
                    out.append(None)
                continue
            col = indent + len(t) - len(body)
            if _is_seq(body):
                lines[self.i] = (col, body)
                out.append(self.seq(col))
            elif body[0] not in "[{" and _split_key(body) is not None:
                lines[self.i] = (col, body)
                out.append(self.mapping(col))
            else:
                self.i += 1
                out.append(self.value(body, indent))
        return out

    def value(self, rest: str, indent: int):
        lines = self.lines
        if not rest or rest[0] == "#":
            if self.i < self.n:
                ind, t = lines[self.i]
                if ind > indent:
                    return self.block(ind)
                if ind == indent and _is_seq(t):
                    return self.seq(ind)
            return None
        c = rest[0]
        if c in "\"'":
            return _quoted(rest, 0)[0]
        if c in "[{":
            return self.flow(rest, indent)
        if c in "|>" and (len(rest) == 1 or rest[1] in "+-0123456789 #"):
            return self.block_scalar(c, indent)
        if c in "&*!":
            raise YAMLError("anchors, aliases and tags are not supported")
        v = _plain(rest)
        # multi-line plain scalar: continuation lines indented deeper
        while self.i < self.n and lines[self.i][0] > indent and v is not None:
            t = lines[self.i][1]
            if _split_key(t) is not None or _is_seq(t):
                break
            v = v + " " + t
            self.i += 1
        return v

    def block_scalar(self, style: str, indent: int) -> str:
        parts = []
        lines = self.lines
        while self.i < self.n and lines[self.i][0] > indent:
            parts.append(lines[self.i][1])
            self.i += 1
        return ("\n" if style == "|" else " ").join(parts)

    def flow(self, rest: str, indent: int):
        text = rest
        while True:
            try:
                val, j = _Flow(text).parse()
            except _Incomplete:
                if self.i < self.n and self.lines[self.i][0] > indent:
                    text = text + " " + self.lines[self.i][1]
                    self.i += 1
                    continue
                raise YAMLError("unterminated flow collection") from None
            tail = text[j:].strip()
            if tail and not tail.startswith("#"):
                raise YAMLError(f"junk after flow collection: {tail[:20]!r}")
            return val


_FLOW_VAL_END = re.compile(r"[,\]}]")
_FLOW_KEY_END = re.compile(r"[,\]}]|:(?=[ ,\]}]|$)")


class _Incomplete(Exception):
    pass


class _Flow:
    __slots__ = ("s", "i", "n")

    def __init__(self, s: str):
        self.s = s
        self.i = 0
        self.n = len(s)

    def ws(self):
        s, n = self.s, self.n
        while self.i < n and s[self.i] == " ":
            self.i += 1
        if self.i >= n:
            raise _Incomplete

    def parse(self):
        v = self.node(False)
        return v, self.i

    def node(self, in_map_key: bool):
        self.ws()
        c = self.s[self.i]
        if c == "{":
            return self.mapping()
        if c == "[":
            return self.sequence()
        if c in "\"'":
            try:
                v, self.i = _quoted(self.s, self.i)
            except YAMLError:
                raise _Incomplete from None
            return v
        return self.plain(in_map_key)

    def plain(self, key: bool):
        m = (_FLOW_KEY_END if key else _FLOW_VAL_END).search(self.s, self.i)
        j = m.start() if m else self.n
        v = self.s[self.i : j].strip()
        self.i = j
        return v if v else None

    def mapping(self):
        self.i += 1
        d: dict = {}
        s = self.s
        while True:
            self.ws()
            if s[self.i] == "}":
                self.i += 1
                return d
            k = self.node(True)
            if isinstance(k, (list, dict)):
                raise YAMLError("complex keys are not supported")
            self.ws()
            if s[self.i] == ":":
                self.i += 1
                self.ws()
                if s[self.i] in ",}":
                    v = None
                else:
                    v = self.node(False)
            else:
                v = None
            d[k] = v
            self.ws()
            c = s[self.i]
            if c == ",":
                self.i += 1
            elif c != "}":
                raise YAMLError("expected , or } in flow mapping")

    def sequence(self):
        self.i += 1
        out: list = []
        s = self.s
        while True:
            self.ws()
            if s[self.i] == "]":
                self.i += 1
                return out
            out.append(self.node(False))
            self.ws()
            c = s[self.i]
            if c == ",":
                self.i += 1
            elif c != "]":
                raise YAMLError("expected , or ] in flow sequence")
