"""Project scan: find and parse the manifests and lockfiles of a project and its workspace
members, within bounds (depth, file count, directory count, file size). Standard library only.

Nothing in a file's content can make ``scan_project`` raise: a file that fails to read or
parse is skipped and recorded in ``ScanResult.errors``.

The project is hostile input (a repository cloned from a stranger):

* The boundary: nothing outside the project root is read. A symlink (file or folder) is
  followed only when it resolves inside the root; folder symlinks are never walked; a
  workspace glob never descends through a symlink; every directory visited is checked by
  its real path, which also ends symlink loops.
* Only regular files are opened: ``lstat`` before ``open`` (a FIFO, socket or device is
  skipped), ``open`` with ``O_NONBLOCK | O_NOFOLLOW``, then ``fstat`` again on the open file.
  An unreadable file is skipped quietly (counted, not logged).
* Budgets: wall-clock time, bytes read and files read per scan (``memhooks.warm.settings``),
  a per-file size cap (a larger file is skipped and counted). A scan cut short by a budget
  returns what it found plus ``state``, a cursor that ``scan_project(resume=state)``
  continues from in the next session.
* Names and versions are data: a dependency whose name does not match its ecosystem's
  grammar (``memhooks.names.valid_name``) is dropped, a version that does not match the
  version grammar is dropped from its dependency; both are counted in ``skipped``.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat
import time
from collections import deque
from dataclasses import dataclass, field

from memhooks.names import valid_name, valid_version
from memhooks.warm.lockfiles import KIND_ORDER, LOCKFILES, Dep, Manifest, parser_for

try:  # written by the lead; optional at runtime
    from memhooks.log import log_error
except Exception:  # pragma: no cover - depends on the rest of the package
    log_error = None

__all__ = ["ScanResult", "scan_project", "SKIP_DIRS"]

#: directory names never walked (hidden directories are skipped too)
SKIP_DIRS = frozenset(
    {
        "node_modules", ".git", "vendor", "target", ".venv", "venv", "dist", "build",
        "__pycache__", "bower_components", "site-packages",
        # test data: manifests in there describe fixtures, not the project
        "fixtures", "__fixtures__", "testdata", "test-fixtures",
    }
)
MAX_DIRS = 2000
MAX_BYTES = 8 * 1024 * 1024  # per-file cap (memhooks.warm.settings.scan_max_file_bytes)
MAX_DEPS_PER_FILE = 10_000
MAX_DEPS = 50_000
# Bytes per second a parser is assumed to manage at worst. A big file that would not finish
# inside the time left is left for the next session, unless it is this scan's first big
# file (each session makes progress; the per-file cap bounds that one parse).
PARSE_RATE = 4 * 1024 * 1024
BIG_FILE = 1024 * 1024
RESUME_FILES_FACTOR = 5  # a scan resumed over sessions reads at most this many budgets' files
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
MEMBER_GLOB_DEPTH = 6  # how deep a `**` in a workspace glob reaches
_MEMBER_MARKERS = ("package.json", "Cargo.toml", "pyproject.toml", "go.mod", "composer.json")

# manifests whose reader also gives the package's own name and workspace members
_MANIFEST_READERS = {
    "package.json": ("npm", "read_package_json", "npm"),
    "pyproject.toml": ("python", "read_pyproject", "pypi"),
    "Cargo.toml": ("rust", "read_cargo_toml", "crates"),
    "composer.json": ("php", "read_composer_json", "composer"),
    "go.mod": ("go", "read_go_mod", "go"),
}
_WORKSPACE_FILES = {"pnpm-workspace.yaml", "go.work"}


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


def _printable(text: str) -> str:
    """A path or message from the project for a one-line error: no control characters."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _count(res: ScanResult, what: str, n: int = 1) -> None:
    res.skipped[what] = res.skipped.get(what, 0) + n


def _report(res: ScanResult, msg: str) -> None:
    msg = _printable(msg)
    msg = msg if len(msg) <= 300 else msg[:297] + "..."
    res.errors.append(msg)
    if log_error is not None:
        try:
            log_error("scan: " + msg)
        except Exception:
            pass


def _rel(parent: str, name: str) -> str:
    return name if parent in ("", ".") else parent + "/" + name


def _skip_dir(name: str) -> bool:
    return name[:1] == "." or name in SKIP_DIRS


class _Stop(BaseException):
    """A budget ran out: the scan ends here and saves a cursor."""


class _Scanner:
    def __init__(self, root: str, max_depth: int, max_files: int, max_dirs: int, max_bytes: int,
                 budget_s: float = 1.0, max_total_bytes: int = 32 * 1024 * 1024):
        self.root = root
        self.max_depth = max_depth
        self.max_files = max_files
        self.max_dirs = max_dirs
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
        self.real_visited: set[str] = set()
        self.seen_files: set[str] = set()
        self.visited: set[str] = set()
        self.queue: deque[tuple[str, int]] = deque()
        self.local: set[tuple[str, str]] = set()
        self.lock_deps: list[Dep] = []
        self.manifest_deps: list[Dep] = []
        self.multi_files: set[str] = set()  # lockfiles that list one package more than once
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
        raise _Stop(which)

    # -------------------------------------------------------------- IO
    def read(self, rel: str) -> str | None:
        """Text of a regular file under root, or None (skipped, counted; a too-large,
        undecodable or failing file is also recorded in errors). Raises _Stop when the
        bytes budget would run out: the file is left for the next scan."""
        path = os.path.join(self.root, rel)
        try:
            st = os.lstat(path)
        except OSError:
            _count(self.res, "unreadable")
            return None
        if stat.S_ISLNK(st.st_mode):
            real = self.resolve_inside(path)
            if real is None:
                _count(self.res, "outside-root")
                return None
            path = real
            try:
                st = os.stat(path)
            except OSError:
                _count(self.res, "unreadable")
                return None
        if not stat.S_ISREG(st.st_mode):
            _count(self.res, "not-regular")
            return None
        if st.st_size > self.max_bytes or st.st_size > self.max_total_bytes:
            _count(self.res, "too-large")
            _report(self.res, f"{rel}: larger than {self.max_bytes} bytes, skipped")
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
            _count(self.res, "unreadable")  # permissions, or swapped for a symlink (ELOOP)
            return None
        try:
            fst = os.fstat(fd)
            if not stat.S_ISREG(fst.st_mode):
                _count(self.res, "not-regular")
                return None
            if fst.st_size > self.max_bytes:
                _count(self.res, "too-large")
                _report(self.res, f"{rel}: larger than {self.max_bytes} bytes, skipped")
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
            _count(self.res, "unreadable")
            return None
        finally:
            os.close(fd)
        data = b"".join(chunks)
        self.bytes_read += len(data)
        if len(data) > self.max_bytes:
            _count(self.res, "too-large")
            _report(self.res, f"{rel}: larger than {self.max_bytes} bytes, skipped")
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            _count(self.res, "not-utf8")
            _report(self.res, f"{rel}: not UTF-8 text, skipped")
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

    # -------------------------------------------------------------- walk
    def run(self) -> ScanResult:
        if not self.queue and not self.visited:
            self.queue.append(("", 0))
        current = None
        try:
            while self.queue:
                self.check_budget()
                current = self.queue.popleft()
                rel, depth = current
                if rel in self.visited:
                    current = None
                    continue
                if len(self.visited) >= self.max_dirs:
                    self.res.truncated = True
                    current = None
                    break
                self.visited.add(rel)
                self.visit(rel, depth)
                current = None
        except _Stop:
            if current is not None:  # cut inside a directory: list it again next time
                self.visited.discard(current[0])
                real = self.resolve_inside(os.path.join(self.root, current[0]) if current[0] else self.root)
                self.real_visited.discard(real)
                self.res.dirs = [d for d in self.res.dirs if d != (current[0] or ".")]
                self.queue.appendleft(current)
            self.res.complete = False
        self.finish()
        if not self.res.complete:
            self.res.state = self.save_state()
        self.res.bytes_read = self.bytes_read
        self.res.seconds = time.monotonic() - self.started
        return self.res

    def visit(self, rel: str, depth: int) -> None:
        absdir = os.path.join(self.root, rel) if rel else self.root
        real = self.resolve_inside(absdir)
        if real is None:
            _count(self.res, "outside-root")
            return
        if real in self.real_visited:  # the same folder by another path (a symlink loop)
            return
        self.real_visited.add(real)
        self.visits += 1
        try:
            with os.scandir(absdir) as it:
                entries = [(e.name, e) for e in it]
        except OSError as e:
            _report(self.res, f"{rel or '.'}: cannot list: {e.strerror or e}")
            return
        self.res.dirs.append(rel or ".")
        entries.sort()
        subdirs = []
        files = []
        in_req_dir = posixpath.basename(rel) == "requirements"
        for name, e in entries:
            wanted = name in _WORKSPACE_FILES or parser_for(name) is not None or (
                in_req_dir and name.endswith((".txt", ".in")) and "constraint" not in name)
            try:
                if e.is_dir(follow_symlinks=False):
                    if not _skip_dir(name):
                        subdirs.append(name)
                    continue
                if not wanted:
                    continue
                if e.is_symlink():
                    # followed only to a regular file inside the root
                    target = self.resolve_inside(os.path.join(absdir, name))
                    if target is None:
                        _count(self.res, "outside-root")
                        continue
                    if not os.path.isfile(target):
                        continue
                elif not e.is_file(follow_symlinks=False):
                    _count(self.res, "not-regular")  # a FIFO, socket or device
                    continue
            except OSError:
                continue
            files.append(name)
        for name in files:
            frel = _rel(rel, name)
            counted = False
            if frel in self.included:
                # read before as another requirements file's -r/-c include: parse it on its own too
                self.included.discard(frel)
            elif not self.count_file(frel):
                continue
            else:
                counted = True
            try:
                text = self.read(frel)
            except _Stop:
                if counted:
                    self.uncount_file(frel)
                raise
            if text is None:
                continue
            try:
                self.parse(frel, name, rel, text)
            except Exception as e:  # any content problem: skip the file, keep going
                _report(self.res, f"{frel}: {e.__class__.__name__}: {e}")
        if depth < self.max_depth:
            for name in subdirs:
                self.queue.append((_rel(rel, name), depth + 1))

    # -------------------------------------------------------------- parse
    def parse(self, frel: str, name: str, dirrel: str, text: str) -> None:
        if name == "pnpm-workspace.yaml":
            from memhooks.warm.lockfiles.npm import read_pnpm_workspace

            globs = read_pnpm_workspace(text)
            self.add_members(dirrel, [g for g in globs if not g.startswith("!")],
                             [g[1:] for g in globs if g.startswith("!")])
            return
        if name == "go.work":
            from memhooks.warm.lockfiles.go import read_go_work

            self.add_members(dirrel, read_go_work(text), [])
            return
        reader = _MANIFEST_READERS.get(name)
        if reader is not None:
            import importlib

            mod = importlib.import_module(f"memhooks.warm.lockfiles.{reader[0]}")
            man: Manifest = getattr(mod, reader[1])(text, frel)
            if man.name:
                from memhooks.names import normalize

                self.local.add((reader[2], normalize(man.name, reader[2])))
            self.manifest_deps.extend(self.capped(man.deps))
            if man.members:
                self.add_members(dirrel, man.members, man.exclude)
            return
        parser = parser_for(name)
        if parser is None:  # a *.txt in a requirements/ directory
            from memhooks.warm.lockfiles.python import parse_requirements as parser
        if getattr(parser, "func", None) == "parse_requirements" or parser.__name__ == "parse_requirements":
            deps = parser(text, frel, reader=self.include_reader)
        else:
            deps = parser(text, frel)
        deps = self.capped(deps)
        if name in LOCKFILES:
            if len({d.key for d in deps}) < len(deps):
                self.multi_files.add(frel)  # several versions of one package
            self.lock_deps.extend(deps)
        else:
            self.manifest_deps.extend(deps)

    def capped(self, deps: list[Dep]) -> list[Dep]:
        """At most MAX_DEPS_PER_FILE deps from one file and MAX_DEPS in all: the rank needs
        the direct deps and a few transitive ones, and a cut scan's cursor stays small."""
        room = max(0, min(MAX_DEPS_PER_FILE, MAX_DEPS - len(self.manifest_deps) - len(self.lock_deps)))
        if len(deps) > room:
            _count(self.res, "deps-capped", len(deps) - room)
            return deps[:room]
        return deps

    def include_reader(self, rel: str) -> str | None:
        """Reader for requirements includes: files under root only, counted like any file."""
        if rel.startswith(("../", "/")) or rel == "..":
            return None
        rel = posixpath.normpath(rel)
        if rel.startswith(("../", "/")) or rel in ("..", "."):
            return None
        if self.resolve_inside(os.path.join(self.root, rel)) is None:
            _count(self.res, "outside-root")
            return None
        if rel not in self.seen_files:
            if not os.path.isfile(os.path.join(self.root, rel)):
                _report(self.res, f"{rel}: included but not found")
                return None
            try:
                if not self.count_file(rel):
                    return None
            except _Stop:
                return None  # the including file is parsed without it this time
            self.included.add(rel)
        try:
            return self.read(rel)
        except _Stop:
            return None

    # -------------------------------------------------------------- workspaces
    def add_members(self, base: str, globs: list[str], exclude: list[str]) -> None:
        found: list[str] = []
        for g in globs:
            g = g.strip().strip("/")
            if g.startswith("./"):
                g = g[2:]
            if not g or g.startswith("/") or ".." in g.split("/"):
                continue
            found.extend(self.expand(base, g))
        excl = [posixpath.normpath(_rel(base, x.strip().strip("/").removeprefix("./"))) for x in exclude if x.strip()]
        for d in sorted(set(found)):
            if any(fnmatch.fnmatchcase(d, x) for x in excl):
                continue
            dabs = os.path.join(self.root, d)
            if self.resolve_inside(dabs) is None:
                _count(self.res, "outside-root")
                continue
            if not any(os.path.isfile(os.path.join(dabs, m)) for m in _MEMBER_MARKERS):
                continue
            if d not in self.res.members:
                self.res.members.append(d)
            if d not in self.visited:
                depth = d.count("/") + 1
                # members are visited first and even past max_depth; their subdirs only within it
                self.queue.appendleft((d, min(depth, self.max_depth)))

    def expand(self, base: str, pattern: str) -> list[str]:
        parts = [p for p in pattern.split("/") if p and p != "."]
        current = [base]
        budget = 5000  # directories listed while expanding one glob
        for part in parts:
            nxt: list[str] = []
            if part == "**":
                # any depth (bounded): keep the current dirs and all their descendants
                stack = [(c, 0) for c in current]
                while stack and budget > 0:
                    if time.monotonic() > self.deadline:  # the time budget: keep what was found
                        budget = 0
                        break
                    c, lvl = stack.pop()
                    nxt.append(c)
                    if lvl >= MEMBER_GLOB_DEPTH:
                        continue
                    for sub in self.listdirs(c):
                        budget -= 1
                        stack.append((_rel(c, sub), lvl + 1))
            elif any(ch in part for ch in "*?["):
                for c in current:
                    for sub in self.listdirs(c):
                        budget -= 1
                        if fnmatch.fnmatchcase(sub, part):
                            nxt.append(_rel(c, sub))
            else:
                for c in current:
                    path = os.path.join(self.root, _rel(c, part))
                    # a literal segment never goes through a symlink (`ln -s / r` with `r/**`)
                    if not _skip_dir(part) and not os.path.islink(path) and os.path.isdir(path):
                        nxt.append(_rel(c, part))
            current = nxt
            if budget <= 0:
                self.res.truncated = True
                break
        return [c for c in current if c]

    def listdirs(self, rel: str) -> list[str]:
        path = os.path.join(self.root, rel) if rel else self.root
        if rel and self.resolve_inside(path) is None:
            return []
        try:
            with os.scandir(path) as it:
                return sorted(e.name for e in it if not _skip_dir(e.name) and e.is_dir(follow_symlinks=False))
        except OSError:
            return []

    # -------------------------------------------------------------- merge
    def checked(self, deps: list[Dep]) -> list[Dep]:
        """Only deps whose name matches its ecosystem's grammar; bad versions dropped."""
        out = []
        for d in deps:
            if not valid_name(d.name, d.ecosystem):
                _count(self.res, "names-dropped")
                continue
            if d.version is not None and not valid_version(d.version):
                _count(self.res, "versions-dropped")
                d = Dep(d.name, d.key, d.ecosystem, None, d.kind, d.manifest, d.spec)
            out.append(d)
        return out

    def finish(self) -> None:
        """Drop the project's own packages; give lockfile entries the kind their manifests say."""
        self.manifest_deps = self.checked(self.manifest_deps)
        self.lock_deps = self.checked(self.lock_deps)
        self._finish()

    # ------------------------------------------------------------ resume
    def save_state(self) -> dict:
        """A JSON-able cursor: `scan_project(resume=state)` continues from here."""
        def deps(items):
            return [[d.name, d.ecosystem, d.version, d.kind, d.manifest, d.spec] for d in items]

        return {
            "v": 1, "root": self.root,
            "queue": [list(q) for q in self.queue], "visited": sorted(self.visited),
            "real_visited": sorted(self.real_visited),
            "seen_files": sorted(self.seen_files), "files": self.res.files, "dirs": self.res.dirs,
            "members": self.res.members, "errors": self.res.errors[-50:],
            "skipped": dict(self.res.skipped),
            "local": sorted(list(x) for x in self.local), "lock_deps": deps(self.lock_deps),
            "manifest_deps": deps(self.manifest_deps), "multi_files": sorted(self.multi_files),
            "included": sorted(self.included),
        }

    def load_state(self, state: dict) -> bool:
        from memhooks.warm.lockfiles import make_dep

        try:
            if state.get("v") != 1 or state.get("root") != self.root:
                return False

            def deps(items):
                return [make_dep(str(n), str(e), v, str(k), str(m), sp) for n, e, v, k, m, sp in items
                        if k in KIND_ORDER]

            queue = deque((str(r), int(d)) for r, d in state["queue"])
            visited, real_visited = set(state["visited"]), set(state["real_visited"])
            seen = set(state["seen_files"])
            lock_deps, manifest_deps = deps(state["lock_deps"]), deps(state["manifest_deps"])
            local = {(str(a), str(b)) for a, b in state["local"]}
            files, dirs = list(state["files"]), list(state["dirs"])
            members, errors = list(state["members"]), list(state["errors"])
            skipped = {str(k): int(v) for k, v in dict(state["skipped"]).items()}
            multi, included = set(state["multi_files"]), set(state["included"])
        except (KeyError, TypeError, ValueError, AttributeError):
            return False
        self.queue, self.visited, self.real_visited, self.seen_files = queue, visited, real_visited, seen
        self.lock_deps, self.manifest_deps, self.local = lock_deps, manifest_deps, local
        self.res.files, self.res.dirs, self.res.members, self.res.errors = files, dirs, members, errors
        self.res.skipped, self.multi_files, self.included = skipped, multi, included
        return True

    def _finish(self) -> None:
        local = self.local
        direct: dict[tuple[str, str], str] = {}
        for d in self.manifest_deps:
            k = (d.ecosystem, d.key)
            cur = direct.get(k)
            if cur is None or KIND_ORDER[d.kind] < KIND_ORDER[cur]:
                direct[k] = d.kind
        # A lockfile may lock several versions of one package (yarn classic: one entry per
        # version, its `spec` listing the ranges it resolves). Only the entry that a
        # manifest's range resolves to is the direct dep; the others stay transitive.
        skip_promote: set[int] = set()
        if self.multi_files:
            groups: dict[tuple[str, str, str], list[int]] = {}
            for i, d in enumerate(self.lock_deps):
                if d.manifest in self.multi_files and (d.ecosystem, d.key) in direct:
                    groups.setdefault((d.manifest, d.ecosystem, d.key), []).append(i)
            specs: dict[tuple[str, str], set[str]] = {}
            for d in self.manifest_deps:
                if d.spec and d.kind != "transitive":
                    specs.setdefault((d.ecosystem, d.key), set()).add(d.spec.strip())
            for (_, eco, key), g in groups.items():
                if len(g) < 2:
                    continue
                wanted = specs.get((eco, key), set())
                hit = [i for i in g if wanted.intersection((self.lock_deps[i].spec or "").split(", "))]
                keep = hit or g[:1]
                skip_promote.update(i for i in g if i not in keep)
        locked: dict[tuple[str, str], str] = {}  # the version locked for a direct dep
        promoted: list[Dep] = []
        for i, d in enumerate(self.lock_deps):
            k = (d.ecosystem, d.key)
            if k in local:
                continue
            kind = direct.get(k)
            if kind is not None:
                if kind != "transitive" and kind != d.kind and i not in skip_promote:
                    d = Dep(d.name, d.key, d.ecosystem, d.version, kind, d.manifest, d.spec)
                if d.kind != "transitive" and d.version and k not in locked:
                    locked[k] = d.version
            promoted.append(d)
        out = []
        for d in self.manifest_deps:
            k = (d.ecosystem, d.key)
            if k in local:
                continue
            v = locked.get(k)
            if v is not None and v != d.version:  # the lockfile's version, not the manifest's guess
                d = Dep(d.name, d.key, d.ecosystem, v, d.kind, d.manifest, d.spec)
            out.append(d)
        out.extend(promoted)
        self.res.deps = out


def scan_project(
    root: str | os.PathLike,
    *,
    max_depth: int = 4,
    max_files: int | None = None,
    max_dirs: int = MAX_DIRS,
    max_bytes: int | None = None,
    budget_s: float | None = None,
    max_total_bytes: int | None = None,
    resume: dict | None = None,
) -> ScanResult:
    """Scan ``root`` (and its workspace members) for manifests and lockfiles.

    Walks breadth-first to ``max_depth`` directory levels, listing at most ``max_dirs``
    directories; skips ``SKIP_DIRS`` and hidden directories. Budgets (defaults from
    ``memhooks.warm.settings``): ``budget_s`` seconds, ``max_files`` files read,
    ``max_total_bytes`` bytes read; ``max_bytes`` is the per-file cap. A scan a budget cut
    short has ``complete = False`` and a ``state`` to pass as ``resume`` next time. Never
    raises for file content; problems land in ``errors`` and ``skipped``.
    """
    from memhooks.warm import settings

    try:
        rootp = os.path.realpath(os.fspath(root))
        if not os.path.isdir(rootp):
            raise FileNotFoundError(f"not a directory: {rootp}")
    except Exception as e:
        res = ScanResult()
        _report(res, f"bad root: {e}")
        return res
    sc = _Scanner(
        rootp, max(0, int(max_depth)),
        max(0, int(settings.scan_max_files() if max_files is None else max_files)),
        max(1, int(max_dirs)),
        int(settings.scan_max_file_bytes() if max_bytes is None else max_bytes),
        budget_s=float(settings.scan_budget_s() if budget_s is None else budget_s),
        max_total_bytes=int(settings.scan_max_bytes() if max_total_bytes is None else max_total_bytes),
    )
    if resume:
        sc.load_state(resume)
    try:
        return sc.run()
    except Exception as e:  # defensive: a bug here must not break the hook
        _report(sc.res, f"scan aborted: {e.__class__.__name__}: {e}")
        try:
            sc.finish()
        except Exception:
            pass
        return sc.res
