"""The project boundary and safe file reading for a scan: nothing outside the project root
is read, only regular files are opened, and every read counts against the scan's budgets.
Standard library only.

* A symlink is followed only when it resolves inside the root (``resolve_inside``).
* ``lstat`` before ``open`` (a FIFO, socket or device is skipped), ``open`` with
  ``O_NONBLOCK | O_NOFOLLOW``, then ``fstat`` again on the open file. An unreadable file is
  skipped quietly (counted, not logged).
* Budgets: wall-clock time, bytes read and files read per scan, and a per-file size cap. A
  budget that runs out raises ``Stop``; the scan saves a cursor and ends.
"""

from __future__ import annotations

import os
import posixpath
import stat
import time

from memhooks.warm.scan_result import ScanResult, count_skipped, report

# Bytes per second a parser is assumed to manage at worst. A big file that would not finish
# inside the time left is left for the next session, unless it is this scan's first big
# file (each session makes progress; the per-file cap bounds that one parse).
PARSE_RATE = 4 * 1024 * 1024
BIG_FILE = 1024 * 1024
RESUME_FILES_FACTOR = 5  # a scan resumed over sessions reads at most this many budgets' files
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))


class Stop(BaseException):
    """A budget ran out: the scan ends here and saves a cursor."""


class BoundedReader:
    """Reads files under one root within the scan's budgets; the scan's walk builds on it."""

    def __init__(self, root: str, max_files: int, max_bytes: int, budget_s: float = 1.0,
                 max_total_bytes: int = 32 * 1024 * 1024):
        self.root = root
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.max_total_bytes = max_total_bytes
        self.started = time.monotonic()
        self.deadline = self.started + budget_s
        self.files_read = 0  # this scan's share (the budget), not counting earlier sessions
        self.big_read = False  # a file over BIG_FILE was read in this scan
        self.visits = 0  # folders listed in this scan
        self.bytes_read = 0
        self.res = ScanResult()
        self.real_root = root
        self.seen_files: set[str] = set()
        self.included: set[str] = set()  # files read as includes, not yet parsed on their own

    # -------------------------------------------------------------- boundary
    def inside(self, real: str) -> bool:
        """Whether a real (resolved) path is the root or below it."""
        root = self.real_root
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def resolve_inside(self, path: str) -> str | None:
        """The real path of `path` when it resolves inside the root, else None."""
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            return None
        return real if self.inside(real) else None

    def check_budget(self) -> None:
        # every scan makes progress, however small its budgets: one folder, one file
        if not self.files_read and self.visits <= 1:
            return
        if time.monotonic() > self.deadline:
            self.stop("time")
        if self.files_read >= max(1, self.max_files):
            self.stop("files")
        if self.bytes_read >= self.max_total_bytes:
            self.stop("bytes")

    def stop(self, which: str) -> None:
        self.res.budget = self.res.budget or which
        self.res.truncated = True
        raise Stop(which)

    # -------------------------------------------------------------- IO
    def read(self, rel: str) -> str | None:
        """Text of a regular file under root, or None (skipped, counted; a too-large,
        undecodable or failing file is also recorded in errors). Raises Stop when the
        bytes budget would run out: the file is left for the next scan."""
        path = os.path.join(self.root, rel)
        try:
            st = os.lstat(path)
        except OSError:
            count_skipped(self.res, "unreadable")
            return None
        if stat.S_ISLNK(st.st_mode):
            real = self.resolve_inside(path)
            if real is None:
                count_skipped(self.res, "outside-root")
                return None
            path = real
            try:
                st = os.stat(path)
            except OSError:
                count_skipped(self.res, "unreadable")
                return None
        if not stat.S_ISREG(st.st_mode):
            count_skipped(self.res, "not-regular")
            return None
        if st.st_size > self.max_bytes or st.st_size > self.max_total_bytes:
            count_skipped(self.res, "too-large")
            report(self.res, f"{rel}: larger than {self.max_bytes} bytes, skipped")
            return None
        if self.bytes_read and self.bytes_read + st.st_size > self.max_total_bytes:
            self.stop("bytes")
        if st.st_size > BIG_FILE:
            if self.big_read and st.st_size / PARSE_RATE > self.deadline - time.monotonic():
                self.stop("time")
            self.big_read = True
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except OSError:
            count_skipped(self.res, "unreadable")  # permissions, or swapped for a symlink (ELOOP)
            return None
        try:
            fst = os.fstat(fd)
            if not stat.S_ISREG(fst.st_mode):
                count_skipped(self.res, "not-regular")
                return None
            if fst.st_size > self.max_bytes:
                count_skipped(self.res, "too-large")
                report(self.res, f"{rel}: larger than {self.max_bytes} bytes, skipped")
                return None
            limit = min(self.max_bytes, self.max_total_bytes - self.bytes_read) + 1
            chunks, got = [], 0
            while got < limit:
                chunk = os.read(fd, min(1 << 20, limit - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except OSError:
            count_skipped(self.res, "unreadable")
            return None
        finally:
            os.close(fd)
        data = b"".join(chunks)
        self.bytes_read += len(data)
        if len(data) > self.max_bytes:
            count_skipped(self.res, "too-large")
            report(self.res, f"{rel}: larger than {self.max_bytes} bytes, skipped")
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            count_skipped(self.res, "not-utf8")
            report(self.res, f"{rel}: not UTF-8 text, skipped")
            return None

    def count_file(self, rel: str) -> bool:
        if rel in self.seen_files:
            return False
        if len(self.seen_files) >= self.max_files * RESUME_FILES_FACTOR:
            self.res.truncated = True
            return False
        self.check_budget()
        self.seen_files.add(rel)
        self.res.files.append(rel)
        self.files_read += 1
        return True

    def uncount_file(self, rel: str) -> None:
        self.seen_files.discard(rel)
        if self.res.files and self.res.files[-1] == rel:
            self.res.files.pop()
        self.files_read = max(0, self.files_read - 1)

    def include_reader(self, rel: str) -> str | None:
        """Reader for requirements includes: files under root only, counted like any file."""
        if rel.startswith(("../", "/")) or rel == "..":
            return None
        rel = posixpath.normpath(rel)
        if rel.startswith(("../", "/")) or rel in ("..", "."):
            return None
        if self.resolve_inside(os.path.join(self.root, rel)) is None:
            count_skipped(self.res, "outside-root")
            return None
        if rel not in self.seen_files:
            if not os.path.isfile(os.path.join(self.root, rel)):
                report(self.res, f"{rel}: included but not found")
                return None
            try:
                if not self.count_file(rel):
                    return None
            except Stop:
                return None  # the including file is parsed without it this time
            self.included.add(rel)
        try:
            return self.read(rel)
        except Stop:
            return None

