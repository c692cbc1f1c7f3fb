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


# ----------------------------------------------------------------------------- grammars
# Package names, versions and library IDs come from files in a repository or from an API
# answer: hostile text. Nothing reaches the agent, the network or the store unless it
# matches its ecosystem's grammar here. Every pattern is linear (character classes with one
# quantifier each, no nested repetition), and the length cap is checked before the regex.

MAX_NAME = 214  # npm's own cap; the longest of the ecosystems
MAX_VERSION = 80
MAX_LIBRARY_ID = 256
MAX_LINE = 200

_SRC = {
    # npm: optional @scope/, URL-safe characters; legacy names may hold capitals
    "npm": r"(?:@[A-Za-z0-9_][A-Za-z0-9._~-]*+/)?[A-Za-z0-9_][A-Za-z0-9._~-]*+",
    # PEP 508 names: letters/digits at both ends, `._-` inside
    "pypi": r"[A-Za-z0-9](?:[A-Za-z0-9._-]*+(?<=[A-Za-z0-9]))?",
    # crates.io: ASCII letter first, then letters, digits, `_`, `-` (64 at most)
    "crates": r"[A-Za-z][A-Za-z0-9_-]{0,63}+",
    # Go module paths: slash-separated elements of letters, digits and `-._~` (`+` in tails)
    "go": r"[A-Za-z0-9][A-Za-z0-9._~-]*+(?:/[A-Za-z0-9._~+-]++)*+",
    # RubyGems: letters, digits, `._-`
    "gems": r"[A-Za-z0-9_][A-Za-z0-9._-]*+",
    # Composer: vendor/package
    "composer": r"[A-Za-z0-9][A-Za-z0-9_.-]*+/[A-Za-z0-9][A-Za-z0-9_.-]*+",
}
_VERSION_SRC = r"[A-Za-z0-9][A-Za-z0-9._+~!-]*+"
# /owner/repo, then an optional /version or @version; owner and repo never `.` or `..`
_LIBRARY_ID_SRC = (r"/(?!\.{1,2}(?:[/@]|$))[A-Za-z0-9._~-]++/(?!\.{1,2}(?:[/@]|$))[A-Za-z0-9._~-]++"
                   r"(?:[/@][A-Za-z0-9][A-Za-z0-9._+~-]*+)?")
_COMPILED: dict[str, object] = {}


def _rx(key: str):
    rx = _COMPILED.get(key)
    if rx is None:
        import re

        src = _VERSION_SRC if key == "version" else _LIBRARY_ID_SRC if key == "library_id" else _SRC[key]
        rx = _COMPILED[key] = re.compile(src)
    return rx


def valid_name(name, ecosystem: str | None) -> bool:
    """Whether `name` is a well-formed package name of `ecosystem` (any ecosystem when None)."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME or not name.isascii():
        return False
    if ecosystem is None:
        return any(_rx(e).fullmatch(name) for e in _SRC)
    if ecosystem not in _SRC:
        return False
    if ecosystem == "go" and any(p in (".", "..") for p in name.split("/")):
        return False
    return _rx(ecosystem).fullmatch(name) is not None


def valid_version(version) -> bool:
    """A version string: letters, digits and `._+~!-`, a letter or digit first, capped."""
    return (isinstance(version, str) and 0 < len(version) <= MAX_VERSION and version.isascii()
            and _rx("version").fullmatch(version) is not None)


def valid_library_id(library_id) -> bool:
    """The Context7 ID shape: `/owner/repo`, optionally `/owner/repo/<version>` or
    `/owner/repo@<version>`, safe characters only."""
    return (isinstance(library_id, str) and 3 < len(library_id) <= MAX_LIBRARY_ID
            and library_id.isascii() and _rx("library_id").fullmatch(library_id) is not None)


def checked_library_id(library_id) -> str | None:
    """`library_id` stripped of outer whitespace and trailing slashes when it has the
    Context7 ID shape, else None."""
    if not isinstance(library_id, str):
        return None
    lid = library_id.strip()
    while len(lid) > 1 and lid.endswith("/"):
        lid = lid[:-1]
    return lid if valid_library_id(lid) else None

