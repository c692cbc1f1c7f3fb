"""Project scan: find and parse the manifests and lockfiles of a project and its workspace
members, within bounds (depth, file count, directory count, file size). Standard library only.

Nothing in a file's content can make ``scan_project`` raise: a file that fails to read or
parse is skipped and recorded in ``ScanResult.errors``.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections import deque
from dataclasses import dataclass, field

from memhooks.warm.lockfiles import KIND_ORDER, LOCKFILES, Dep, Manifest, parser_for

try:  # written by the lead; optional at runtime
    from memhooks.log import log_error
except Exception:  # pragma: no cover - depends on the rest of the package
    log_error = None

__all__ = ["ScanResult", "scan_project", "fingerprint", "SKIP_DIRS"]

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
MAX_BYTES = 16 * 1024 * 1024
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


def _report(res: ScanResult, msg: str) -> None:
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


class _Scanner:
    def __init__(self, root: str, max_depth: int, max_files: int, max_dirs: int, max_bytes: int):
        self.root = root
        self.max_depth = max_depth
        self.max_files = max_files
        self.max_dirs = max_dirs
        self.max_bytes = max_bytes
        self.res = ScanResult()
        self.seen_files: set[str] = set()
        self.visited: set[str] = set()
        self.queue: deque[tuple[str, int]] = deque()
        self.local: set[tuple[str, str]] = set()
        self.lock_deps: list[Dep] = []
        self.manifest_deps: list[Dep] = []
        self.multi_files: set[str] = set()  # lockfiles that list one package more than once
        self.included: set[str] = set()  # files read as includes, not yet parsed on their own

    # -------------------------------------------------------------- IO
    def read(self, rel: str) -> str | None:
        """Text of a file under root, or None (recorded as an error when it exists but fails)."""
        path = os.path.join(self.root, rel)
        try:
            with open(path, "rb") as fh:
                data = fh.read(self.max_bytes + 1)
        except OSError as e:
            _report(self.res, f"{rel}: {e.__class__.__name__}: {e.strerror or e}")
            return None
        if len(data) > self.max_bytes:
            _report(self.res, f"{rel}: larger than {self.max_bytes} bytes, skipped")
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            _report(self.res, f"{rel}: not UTF-8 text, skipped")
            return None

    def count_file(self, rel: str) -> bool:
        if rel in self.seen_files:
            return False
        if len(self.seen_files) >= self.max_files:
            self.res.truncated = True
            return False
        self.seen_files.add(rel)
        self.res.files.append(rel)
        return True

    # -------------------------------------------------------------- walk
    def run(self) -> ScanResult:
        self.queue.append(("", 0))
        while self.queue:
            rel, depth = self.queue.popleft()
            if rel in self.visited:
                continue
            if len(self.visited) >= self.max_dirs:
                self.res.truncated = True
                break
            self.visited.add(rel)
            self.visit(rel, depth)
        self.finish()
        return self.res

    def visit(self, rel: str, depth: int) -> None:
        absdir = os.path.join(self.root, rel) if rel else self.root
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
            try:
                if e.is_dir(follow_symlinks=False):
                    if not _skip_dir(name):
                        subdirs.append(name)
                    continue
                if not e.is_file():
                    continue
            except OSError:
                continue
            if name in _WORKSPACE_FILES or parser_for(name) is not None:
                files.append(name)
            elif in_req_dir and name.endswith((".txt", ".in")) and "constraint" not in name:
                files.append(name)
        for name in files:
            frel = _rel(rel, name)
            if frel in self.included:
                # read before as another requirements file's -r/-c include: parse it on its own too
                self.included.discard(frel)
            elif not self.count_file(frel):
                continue
            text = self.read(frel)
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
            self.manifest_deps.extend(man.deps)
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
        if name in LOCKFILES:
            if len({d.key for d in deps}) < len(deps):
                self.multi_files.add(frel)  # several versions of one package
            self.lock_deps.extend(deps)
        else:
            self.manifest_deps.extend(deps)

    def include_reader(self, rel: str) -> str | None:
        """Reader for requirements includes: files under root only, counted like any file."""
        if rel.startswith(("../", "/")) or rel == "..":
            return None
        if rel not in self.seen_files:
            if not os.path.isfile(os.path.join(self.root, rel)):
                _report(self.res, f"{rel}: included but not found")
                return None
            if not self.count_file(rel):
                return None
            self.included.add(rel)
        return self.read(rel)

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
        for i, part in enumerate(parts):
            nxt: list[str] = []
            if part == "**":
                # any depth (bounded): keep the current dirs and all their descendants
                stack = [(c, 0) for c in current]
                while stack and budget > 0:
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
                    if not _skip_dir(part) and os.path.isdir(os.path.join(self.root, _rel(c, part))):
                        nxt.append(_rel(c, part))
            current = nxt
            if budget <= 0:
                self.res.truncated = True
                break
        return [c for c in current if c]

    def listdirs(self, rel: str) -> list[str]:
        try:
            with os.scandir(os.path.join(self.root, rel) if rel else self.root) as it:
                return sorted(e.name for e in it if not _skip_dir(e.name) and e.is_dir(follow_symlinks=False))
        except OSError:
            return []

    # -------------------------------------------------------------- merge
    def finish(self) -> None:
        """Drop the project's own packages; give lockfile entries the kind their manifests say."""
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
    max_files: int = 200,
    max_dirs: int = MAX_DIRS,
    max_bytes: int = MAX_BYTES,
) -> ScanResult:
    """Scan ``root`` (and its workspace members) for manifests and lockfiles.

    Walks breadth-first to ``max_depth`` directory levels, reading at most ``max_files``
    files and listing at most ``max_dirs`` directories; skips ``SKIP_DIRS`` and hidden
    directories. Never raises for file content; problems land in ``errors``.
    """
    try:
        rootp = os.path.abspath(os.fspath(root))
    except Exception as e:
        res = ScanResult()
        _report(res, f"bad root: {e}")
        return res
    sc = _Scanner(rootp, max(0, int(max_depth)), max(0, int(max_files)), max(1, int(max_dirs)), int(max_bytes))
    try:
        return sc.run()
    except Exception as e:  # defensive: a bug here must not break the hook
        _report(sc.res, f"scan aborted: {e.__class__.__name__}: {e}")
        try:
            sc.finish()
        except Exception:
            pass
        return sc.res
