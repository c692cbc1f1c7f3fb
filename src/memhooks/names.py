"""Name and key normalisation (standard library only; used on hot paths)."""

from __future__ import annotations

ECOSYSTEMS = ("npm", "pypi", "go", "crates", "gems", "composer")


_SEPARATORS = str.maketrans("_.", "--")


def _pep503(name: str) -> str:
    """PEP 503: lower-case, runs of `-`, `_`, `.` become one `-` (no `re` on hot paths)."""
    out = name.strip().lower().translate(_SEPARATORS)
    while "--" in out:
        out = out.replace("--", "-")
    return out


def normalize(name: str, ecosystem: str | None = None) -> str:
    """Canonical key for a package name in its ecosystem.

    npm: lower-case, scope kept (`@Types/Node` -> `@types/node`).
    pypi: PEP 503 (`Foo_Bar.baz` -> `foo-bar-baz`).
    crates: lower-case, `_` and `-` are the same crate name in the Rust registry.
    go, gems, composer: lower-case (lookups are case-insensitive).
    """
    name = (name or "").strip()
    if ecosystem == "pypi":
        return _pep503(name)
    if ecosystem == "crates":
        return name.lower().replace("_", "-")
    return name.lower()


def lookup_keys(name: str) -> list[str]:
    """Keys to try for a name whose ecosystem is unknown (a lookup)."""
    keys = [normalize(name)]
    for eco in ("pypi", "crates"):
        k = normalize(name, eco)
        if k not in keys:
            keys.append(k)
    return [k for k in keys if k]


def loose_key(name: str) -> str:
    """Spelling-insensitive key: case, and runs of `-`, `_`, `.` folded (PEP 503 style)."""
    return _pep503(name or "")


def topic_key(topic: str) -> str:
    """tier2 topic key: case- and whitespace-insensitive."""
    return " ".join((topic or "").lower().split())


def library_key(library_id: str) -> str:
    """tier2/tier1 library-ID key: `/Org/Repo/` -> `/org/repo`."""
    lid = (library_id or "").strip()
    while len(lid) > 1 and lid.endswith("/"):
        lid = lid[:-1]
    if lid and not lid.startswith("/"):
        lid = "/" + lid
    return lid.lower()


def pick_library(name: str, candidates: list[tuple[str, str | None]]) -> tuple[int, str] | None:
    """The seed's disambiguation rule over (library_id, title) candidates, in order.

    An exact case-insensitive match of the name against the title or the last
    part of the ID wins ("exact"); otherwise the first candidate ("first").
    Returns (index, how) or None when there are no candidates.
    """
    if not candidates:
        return None
    wanted = {k for k in lookup_keys(name)} | {k.rsplit("/", 1)[-1] for k in lookup_keys(name)}
    for i, (lid, title) in enumerate(candidates):
        tail = (lid or "").rstrip("/").rsplit("/", 1)[-1]
        options = {(title or "").strip().lower(), tail.lower(), normalize(tail, "pypi")}
        if (title and normalize(title, "pypi") in wanted) or options & wanted:
            return i, "exact"
    return 0, "first"


def versioned_id(library_id: str, version: str | None, known: list[str] | None) -> str | None:
    """`/org/repo/<v>` when the library's known versions contain the installed one."""
    if not version or not known:
        return None
    plain = version.lstrip("vV")
    for v in known:
        if isinstance(v, str) and v.lstrip("vV") == plain:
            return f"{library_id.rstrip('/')}/{v}"
    return None
