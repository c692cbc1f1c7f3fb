"""Workspace members: expanding a workspace's member globs (npm/pnpm/yarn workspaces, Cargo,
uv, composer, go.work) into member directories, inside the project boundary and within a
listing budget. Standard library only."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import time

from memhooks.warm.files import BoundedReader
from memhooks.warm.scan_result import count_skipped, join_rel, skip_dir

MEMBER_GLOB_DEPTH = 6  # how deep a `**` in a workspace glob reaches
_MEMBER_MARKERS = ("package.json", "Cargo.toml", "pyproject.toml", "go.mod", "composer.json")


def member_dirs(reader: BoundedReader, base: str, globs: list[str], exclude: list[str]) -> list[str]:
    """The member directories (relative to the root, sorted) that `globs` under `base` name,
    less `exclude`: inside the root and holding a manifest."""
    found: list[str] = []
    for g in globs:
        g = g.strip().strip("/")
        if g.startswith("./"):
            g = g[2:]
        if not g or g.startswith("/") or ".." in g.split("/"):
            continue
        found.extend(expand(reader, base, g))
    excl = [posixpath.normpath(join_rel(base, x.strip().strip("/").removeprefix("./"))) for x in exclude if x.strip()]
    out = []
    for d in sorted(set(found)):
        if any(fnmatch.fnmatchcase(d, x) for x in excl):
            continue
        dabs = os.path.join(reader.root, d)
        if reader.resolve_inside(dabs) is None:
            count_skipped(reader.res, "outside-root")
            continue
        if not any(os.path.isfile(os.path.join(dabs, m)) for m in _MEMBER_MARKERS):
            continue
        out.append(d)
    return out


def expand(reader: BoundedReader, base: str, pattern: str) -> list[str]:
    parts = [p for p in pattern.split("/") if p and p != "."]
    current = [base]
    budget = 5000  # directories listed while expanding one glob
    for part in parts:
        nxt: list[str] = []
        if part == "**":
            # any depth (bounded): keep the current dirs and all their descendants
            stack = [(c, 0) for c in current]
            while stack and budget > 0:
                if time.monotonic() > reader.deadline:  # the time budget: keep what was found
                    budget = 0
                    break
                c, lvl = stack.pop()
                nxt.append(c)
                if lvl >= MEMBER_GLOB_DEPTH:
                    continue
                for sub in listdirs(reader, c):
                    budget -= 1
                    stack.append((join_rel(c, sub), lvl + 1))
        elif any(ch in part for ch in "*?["):
            for c in current:
                for sub in listdirs(reader, c):
                    budget -= 1
                    if fnmatch.fnmatchcase(sub, part):
                        nxt.append(join_rel(c, sub))
        else:
            for c in current:
                path = os.path.join(reader.root, join_rel(c, part))
                # a literal segment never goes through a symlink (`ln -s / r` with `r/**`)
                if not skip_dir(part) and not os.path.islink(path) and os.path.isdir(path):
                    nxt.append(join_rel(c, part))
        current = nxt
        if budget <= 0:
            reader.res.truncated = True
            break
    return [c for c in current if c]

def listdirs(reader: BoundedReader, rel: str) -> list[str]:
    path = os.path.join(reader.root, rel) if rel else reader.root
    if rel and reader.resolve_inside(path) is None:
        return []
    try:
        with os.scandir(path) as it:
            return sorted(e.name for e in it if not skip_dir(e.name) and e.is_dir(follow_symlinks=False))
    except OSError:
        return []
