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

Where the parts live: the boundary, safe reading and budgets in ``memhooks.warm.files``;
workspace glob expansion in ``memhooks.warm.workspaces``; the grammar checks and the
manifest/lockfile merge in ``memhooks.warm.merge``; ``ScanResult`` and the shared helpers in
``memhooks.warm.scan_result``. This module is the walk, the parse dispatch and the cursor.
"""

from __future__ import annotations

import importlib
import os
import posixpath
import time
from collections import deque

from memhooks.names import normalize
from memhooks.warm import settings
from memhooks.warm.files import BoundedReader, Stop
from memhooks.warm.lockfiles import KIND_ORDER, LOCKFILES, REQUIREMENTS, Dep, Manifest, make_dep, parser_for
from memhooks.warm.lockfiles.go import read_go_work
from memhooks.warm.lockfiles.npm import read_pnpm_workspace
from memhooks.warm.merge import checked, merge
from memhooks.warm.scan_result import SKIP_DIRS, ScanResult, count_skipped, join_rel, report, skip_dir
from memhooks.warm.workspaces import member_dirs

__all__ = ["ScanResult", "scan_project", "SKIP_DIRS"]

MAX_DIRS = 2000
MAX_BYTES = 8 * 1024 * 1024  # per-file cap (memhooks.warm.settings.scan_max_file_bytes)
MAX_DEPS_PER_FILE = 10_000
MAX_DEPS = 50_000

# manifests whose reader also gives the package's own name and workspace members
_MANIFEST_READERS = {
    "package.json": ("npm", "read_package_json", "npm"),
    "pyproject.toml": ("python", "read_pyproject", "pypi"),
    "Cargo.toml": ("rust", "read_cargo_toml", "crates"),
    "composer.json": ("php", "read_composer_json", "composer"),
    "go.mod": ("go", "read_go_mod", "go"),
}
_WORKSPACE_FILES = {"pnpm-workspace.yaml", "go.work"}


class _Scanner(BoundedReader):
    """The walk: folders breadth-first, manifests parsed, workspace members queued, and a
    cursor saved when a budget cuts the scan short."""

    def __init__(self, root: str, max_depth: int, max_files: int, max_dirs: int, max_bytes: int,
                 budget_s: float = 1.0, max_total_bytes: int = 32 * 1024 * 1024):
        super().__init__(root, max_files, max_bytes, budget_s=budget_s, max_total_bytes=max_total_bytes)
        self.max_depth = max_depth
        self.max_dirs = max_dirs
        self.real_visited: set[str] = set()
        self.visited: set[str] = set()
        self.queue: deque[tuple[str, int]] = deque()
        self.local: set[tuple[str, str]] = set()
        self.lock_deps: list[Dep] = []
        self.manifest_deps: list[Dep] = []
        self.multi_files: set[str] = set()  # lockfiles that list one package more than once

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
        except Stop:
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
            count_skipped(self.res, "outside-root")
            return
        if real in self.real_visited:  # the same folder by another path (a symlink loop)
            return
        self.real_visited.add(real)
        self.visits += 1
        try:
            with os.scandir(absdir) as it:
                entries = [(e.name, e) for e in it]
        except OSError as e:
            report(self.res, f"{rel or '.'}: cannot list: {e.strerror or e}")
            return
        self.res.dirs.append(rel or ".")
        entries.sort()
        subdirs = []
        files = []
        in_req_dir = posixpath.basename(rel) == "requirements"
        for name, entry in entries:
            wanted = name in _WORKSPACE_FILES or parser_for(name) is not None or (
                in_req_dir and name.endswith((".txt", ".in")) and "constraint" not in name)
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not skip_dir(name):
                        subdirs.append(name)
                    continue
                if not wanted:
                    continue
                if entry.is_symlink():
                    # followed only to a regular file inside the root
                    target = self.resolve_inside(os.path.join(absdir, name))
                    if target is None:
                        count_skipped(self.res, "outside-root")
                        continue
                    if not os.path.isfile(target):
                        continue
                elif not entry.is_file(follow_symlinks=False):
                    count_skipped(self.res, "not-regular")  # a FIFO, socket or device
                    continue
            except OSError:
                continue
            files.append(name)
        for name in files:
            frel = join_rel(rel, name)
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
            except Stop:
                if counted:
                    self.uncount_file(frel)
                raise
            if text is None:
                continue
            try:
                self.parse(frel, name, rel, text)
            except Exception as e:  # noqa: BLE001 - any parser's error on hostile content: skip the file, keep going
                report(self.res, f"{frel}: {e.__class__.__name__}: {e}")
        if depth < self.max_depth:
            for name in subdirs:
                self.queue.append((join_rel(rel, name), depth + 1))

    # -------------------------------------------------------------- parse
    def parse(self, frel: str, name: str, dirrel: str, text: str) -> None:
        if name == "pnpm-workspace.yaml":
            globs = read_pnpm_workspace(text)
            self.add_members(dirrel, [g for g in globs if not g.startswith("!")],
                             [g[1:] for g in globs if g.startswith("!")])
            return
        if name == "go.work":
            self.add_members(dirrel, read_go_work(text), [])
            return
        reader = _MANIFEST_READERS.get(name)
        if reader is not None:
            mod = importlib.import_module(f"memhooks.warm.lockfiles.{reader[0]}")
            man: Manifest = getattr(mod, reader[1])(text, frel)
            if man.name:
                self.local.add((reader[2], normalize(man.name, reader[2])))
            self.manifest_deps.extend(self.capped(man.deps))
            if man.members:
                self.add_members(dirrel, man.members, man.exclude)
            return
        parser = parser_for(name) or REQUIREMENTS  # None: a *.txt in a requirements/ directory
        if parser.__name__ == "parse_requirements":
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
            count_skipped(self.res, "deps-capped", len(deps) - room)
            return deps[:room]
        return deps

    # -------------------------------------------------------------- workspaces
    def add_members(self, base: str, globs: list[str], exclude: list[str]) -> None:
        for d in member_dirs(self, base, globs, exclude):
            if d not in self.res.members:
                self.res.members.append(d)
            if d not in self.visited:
                depth = d.count("/") + 1
                # members are visited first and even past max_depth; their subdirs only within it
                self.queue.appendleft((d, min(depth, self.max_depth)))

    # -------------------------------------------------------------- merge
    def finish(self) -> None:
        """Drop the project's own packages; give lockfile entries the kind their manifests say."""
        self.manifest_deps = checked(self.res, self.manifest_deps)
        self.lock_deps = checked(self.res, self.lock_deps)
        self.res.deps = merge(self.manifest_deps, self.lock_deps, self.local, self.multi_files)

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
    try:
        rootp = os.path.realpath(os.fspath(root))
        if not os.path.isdir(rootp):
            raise FileNotFoundError(f"not a directory: {rootp}")
    except (OSError, TypeError, ValueError) as e:  # not a path, a NUL in it, not a folder
        res = ScanResult()
        report(res, f"bad root: {e}")
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
    except Exception as e:  # noqa: BLE001 - defensive: a bug here must not break the hook
        report(sc.res, f"scan aborted: {e.__class__.__name__}: {e}")
        try:
            sc.finish()
        except Exception:  # noqa: BLE001 - best effort after the bug above; the report says it
            pass
        return sc.res
