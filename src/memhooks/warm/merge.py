"""Merging a scan's dependencies: names and versions checked against their grammars, the
project's own packages dropped, and lockfile entries given the kind (and manifests the
version) the other side says. Standard library only."""

from __future__ import annotations

from memhooks.names import valid_name, valid_version
from memhooks.warm.lockfiles import KIND_ORDER, Dep
from memhooks.warm.scan_result import ScanResult, count_skipped


def checked(res: ScanResult, deps: list[Dep]) -> list[Dep]:
    """Only deps whose name matches its ecosystem's grammar; bad versions dropped."""
    out = []
    for d in deps:
        if not valid_name(d.name, d.ecosystem):
            count_skipped(res, "names-dropped")
            continue
        if d.version is not None and not valid_version(d.version):
            count_skipped(res, "versions-dropped")
            d = Dep(d.name, d.key, d.ecosystem, None, d.kind, d.manifest, d.spec)
        out.append(d)
    return out


def merge(manifest_deps: list[Dep], lock_deps: list[Dep], local: set[tuple[str, str]],
          multi_files: set[str]) -> list[Dep]:
    """Manifest deps (with the versions their lockfiles lock) then lockfile deps (with the
    kind their manifests give), less the project's own packages (`local`)."""
    direct: dict[tuple[str, str], str] = {}
    for d in manifest_deps:
        k = (d.ecosystem, d.key)
        cur = direct.get(k)
        if cur is None or KIND_ORDER[d.kind] < KIND_ORDER[cur]:
            direct[k] = d.kind
    # A lockfile may lock several versions of one package (yarn classic: one entry per
    # version, its `spec` listing the ranges it resolves). Only the entry that a
    # manifest's range resolves to is the direct dep; the others stay transitive.
    skip_promote: set[int] = set()
    if multi_files:
        groups: dict[tuple[str, str, str], list[int]] = {}
        for i, d in enumerate(lock_deps):
            if d.manifest in multi_files and (d.ecosystem, d.key) in direct:
                groups.setdefault((d.manifest, d.ecosystem, d.key), []).append(i)
        specs: dict[tuple[str, str], set[str]] = {}
        for d in manifest_deps:
            if d.spec and d.kind != "transitive":
                specs.setdefault((d.ecosystem, d.key), set()).add(d.spec.strip())
        for (_, eco, key), g in groups.items():
            if len(g) < 2:
                continue
            wanted = specs.get((eco, key), set())
            hit = [i for i in g if wanted.intersection((lock_deps[i].spec or "").split(", "))]
            keep = hit or g[:1]
            skip_promote.update(i for i in g if i not in keep)
    locked: dict[tuple[str, str], str] = {}  # the version locked for a direct dep
    promoted: list[Dep] = []
    for i, d in enumerate(lock_deps):
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
    for d in manifest_deps:
        k = (d.ecosystem, d.key)
        if k in local:
            continue
        v = locked.get(k)
        if v is not None and v != d.version:  # the lockfile's version, not the manifest's guess
            d = Dep(d.name, d.key, d.ecosystem, v, d.kind, d.manifest, d.spec)
        out.append(d)
    out.extend(promoted)
    return out

