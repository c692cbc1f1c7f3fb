"""Text for a person at a terminal (standard library only; cold paths only).

* ``width()``: the terminal's width in columns (``COLUMNS`` first, then the terminal on
  stdout, else 80), clamped to a readable range.
* ``is_terminal(stream)``: whether a stream is a terminal (people) rather than a pipe or a
  file (scripts and agents).
* ``wrap(text, width, indent, subsequent)``: lines at word boundaries, never inside a word,
  measured in terminal cells (East Asian wide characters count two, combining marks none).
  A word longer than a whole line stands alone on its line, unbroken (a URL stays clickable).
* ``ago(epoch, now)``: "just now", "5 minutes ago", "3 days ago", "2 years ago".
* ``tokens(n)``: an estimate said honestly: "< 1k tokens", "~12k tokens", "~1.2M tokens".
* ``StatusLine``: one line of progress on a terminal's stderr, rewritten in place and erased
  at the end; nothing at all when stderr is not a terminal.

Stored text reaches these functions only after memhooks.egress (one_line / clean / defuse).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import unicodedata

MIN_WIDTH = 40
MAX_WIDTH = 200


def width(default: int = 80) -> int:
    """Columns to wrap at: COLUMNS, else the terminal on stdout, else `default`."""
    cols = shutil.get_terminal_size((default, 24)).columns
    if cols <= 0:
        cols = default
    return max(MIN_WIDTH, min(MAX_WIDTH, cols))


def height(default: int = 24) -> int:
    rows = shutil.get_terminal_size((80, default)).lines
    return rows if rows > 0 else default


def is_terminal(stream=None) -> bool:
    stream = sys.stdout if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def cells(text: str) -> int:
    """Terminal cells `text` takes: wide and fullwidth characters 2, combining marks and
    zero-width characters 0, everything else 1."""
    if text.isascii():
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """`text` (one paragraph: runs of whitespace are one space) as lines of at most `width`
    cells, broken only between words. A word longer than a line stands alone, unbroken."""
    subsequent = indent if subsequent is None else subsequent
    lines: list[str] = []
    cur: list[str] = []
    used, lead = 0, indent
    for word in text.split():
        w = cells(word)
        room = width - cells(lead)
        if cur and used + 1 + w > room:
            lines.append(lead + " ".join(cur))
            cur, used, lead = [], 0, subsequent
        used += w if not cur else 1 + w
        cur.append(word)
    if cur:
        lines.append(lead + " ".join(cur))
    return lines


def wrap_block(text: str, width: int, indent: str = "") -> list[str]:
    """A multi-line text wrapped line by line: each line keeps its own leading spaces (code
    stays indented), blank lines stay, long lines wrap at word boundaries under their indent."""
    out: list[str] = []
    for raw in text.expandtabs(4).split("\n"):
        stripped = raw.lstrip(" ")
        if not stripped.strip():
            out.append("")
            continue
        lead = indent + " " * min(len(raw) - len(stripped), max(0, width // 3))
        out += wrap(stripped, width, lead, lead)
    return out


def ago(epoch: float | None, now: float | None = None) -> str:
    """How long ago, in the largest whole unit: "just now", "1 minute ago", "3 days ago"."""
    if epoch is None:
        return "at an unknown time"
    now = time.time() if now is None else now
    secs = now - float(epoch)
    if secs < 0:
        return "in the future"  # a clock moved back; never a negative age
    for unit, size in (("year", 365 * 86400), ("month", 30 * 86400), ("week", 7 * 86400),
                       ("day", 86400), ("hour", 3600), ("minute", 60)):
        n = int(secs // size)
        if n >= 1:
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def tokens(n: int | None) -> str:
    """An estimated token count as words that do not overstate it: under a thousand is
    "< 1k tokens" (never "~0"), then "~12k", "~1.2M"."""
    n = max(0, int(n or 0))
    if n < 1000:
        return "< 1k tokens"
    if n < 1_000_000:
        return f"~{round(n / 1000):,}k tokens"
    return f"~{n / 1_000_000:.1f}M tokens"


class StatusLine:
    """Progress on one line of a terminal's stderr: `show(text)` rewrites it in place, `done()`
    erases it. Silent when stderr is not a terminal (a pipe, a file, a test runner)."""

    def __init__(self, stream=None):
        self.stream = sys.stderr if stream is None else stream
        self.live = is_terminal(self.stream) and os.environ.get("TERM") != "dumb"
        self._width = width() - 1

    def show(self, text: str) -> None:
        if not self.live:
            return
        line = text if cells(text) <= self._width else text[: self._width - 1] + "…"
        self.stream.write("\r\x1b[2K" + line)
        self.stream.flush()

    def done(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.done()
        return False


def human_bytes(n) -> str:
    """Bytes for people: `512 B`, `1.5 KiB`, `3.2 MiB`, `1.1 GiB`."""
    n = float(n or 0)
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"
