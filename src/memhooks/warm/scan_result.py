"""What a project scan returns, and the small helpers every part of the scan shares: the
skip counters, the one-line error report, relative-path joining and the folders never walked.
Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, field

from memhooks.log import log_error
from memhooks.warm.lockfiles import Dep

#: directory names never walked (hidden directories are skipped too)
SKIP_DIRS = frozenset(
    {
        "node_modules", ".git", "vendor", "target", ".venv", "venv", "dist", "build",
        "__pycache__", "bower_components", "site-packages",
        # test data: manifests in there describe fixtures, not the project
        "fixtures", "__fixtures__", "testdata", "test-fixtures",
    }
)


@dataclass(slots=True)
class ScanResult:
    deps: list[Dep] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # files read, relative to root (posix)
    dirs: list[str] = field(default_factory=list)  # directories visited ("." is the root)
    errors: list[str] = field(default_factory=list)
    truncated: bool = False  # a file/dir bound was hit
    members: list[str] = field(default_factory=list)  # workspace member directories found
    # counts of what was left out: too-large, unreadable, not-regular, outside-root,
    # not-utf8, names-dropped, versions-dropped
    skipped: dict[str, int] = field(default_factory=dict)
    budget: str | None = None  # "time" | "bytes" | "files" when a budget cut this scan short
    complete: bool = True  # False: `state` holds a cursor the next scan continues from
    state: dict | None = None
    bytes_read: int = 0
    seconds: float = 0.0


def printable(text: str) -> str:
    """A path or message from the project for a one-line error: no control characters."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def count_skipped(res: ScanResult, what: str, n: int = 1) -> None:
    res.skipped[what] = res.skipped.get(what, 0) + n


def report(res: ScanResult, msg: str) -> None:
    msg = printable(msg)
    msg = msg if len(msg) <= 300 else msg[:297] + "..."
    res.errors.append(msg)
    log_error("scan: " + msg)  # never raises


def join_rel(parent: str, name: str) -> str:
    return name if parent in ("", ".") else parent + "/" + name


def skip_dir(name: str) -> bool:
    return name[:1] == "." or name in SKIP_DIRS

