"""Reading memhooks' fences in tests: each opens with a line naming a fresh random marker and
closes with the line that carries the same marker (memhooks.egress)."""

from __future__ import annotations

from memhooks.egress import BEGIN_HEAD, begin_line, end_line, fence_markers


def unfence(text: str) -> str:
    """The body of the one fence `text` is (a trailing newline after the closing line
    allowed), with the newline the body ended in."""
    lines = text.rstrip("\n").split("\n")
    markers = fence_markers(text)
    assert len(markers) == 1, text[:300]
    assert lines[0] == begin_line(markers[0]) and lines[-1] == end_line(markers[0]), text[:300]
    return "\n".join(lines[1:-1]) + "\n"


def closing_lines(text: str) -> dict[str, int]:
    """Per marker opened in `text`: how many lines are exactly its closing line."""
    lines = text.split("\n")
    return {m: sum(1 for line in lines if line == end_line(m)) for m in fence_markers(text)}


def begins(text: str) -> list[str]:
    """The opening lines of `text`."""
    return [line for line in text.split("\n") if line.startswith(BEGIN_HEAD)]


def is_begin(line: str) -> bool:
    markers = fence_markers(line)
    return len(markers) == 1 and line == begin_line(markers[0])


def is_end(line: str, text: str) -> bool:
    """`line` closes one of the fences opened in `text`."""
    return any(line == end_line(m) for m in fence_markers(text))


def bodies(text: str) -> list[str]:
    """The body of every fence in `text`, in order (a fence never closed is left out)."""
    out = []
    for m in fence_markers(text):
        head, close = f"{begin_line(m)}\n", f"\n{end_line(m)}"
        if head in text and close in text.split(head, 1)[1]:
            out.append(text.split(head, 1)[1].split(close, 1)[0])
    return out
