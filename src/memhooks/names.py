"""Name and key normalisation (standard library only; used on hot paths)."""

TYPE_CHECKING = False  # `typing` costs `re` and `enum`: for annotations only, never imported here
if TYPE_CHECKING:
    from typing import Literal

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


def pick_library(name: str, candidates: list[tuple[str, str | None]]
                 ) -> "tuple[int, Literal['exact', 'first']] | None":
    """The lc-cache-* scripts' disambiguation rule over (library_id, title) candidates, in order.

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


def _number(digits: str) -> str:
    """A release number compared as text, leading zeros aside (no int(): a hostile version
    of thousands of digits would make int() raise)."""
    return digits.lstrip("0") or "0"


def _release(plain: str) -> list[str] | None:
    """The release numbers of a version without its leading v (`18.2.0-rc.1` -> 18, 2, 0),
    or None when they are not all ASCII digits."""
    parts = plain.split("+", 1)[0].split("-", 1)[0].split(".")
    if not all(p.isascii() and p.isdigit() for p in parts):
        return None
    return [_number(p) for p in parts]


def matching_version(version: str | None, known) -> str | None:
    """The listed version (as listed) that stands for the installed `version`: the one rule
    for a versioned library ID (SessionStart's `this version`, PreToolUse's pinning).

    1. The same version, a leading `v` and case aside (`18.2.0` is `v18.2.0` or `18.2.0`).
    2. Else the most specific listed release line the version is in: a listed version of
       fewer release numbers that all agree (`v18.2`, then `v18` or `v18.x`, for `18.2.5`;
       a trailing `x` or `*` is a wildcard). A listed version as specific as the installed
       one, or more, is another version and never matches (`v18.2.1` is not `18.2.0`; `v18.2.0`
       is not `18.2`), nor is a tag (`canary`, `next`)."""
    if not isinstance(version, str) or not version.strip() or not known:
        return None
    plain = version.strip().lstrip("vV").lower()
    release = _release(plain) if plain else None
    best, best_len = None, 0
    for v in known:
        if not isinstance(v, str) or not v.strip():
            continue
        listed = v.strip().lstrip("vV").lower()
        if listed == plain:
            return v.strip()
        parts = listed.split(".")
        while parts and parts[-1] in ("x", "*"):
            parts.pop()
        if (release is None or not parts or len(parts) >= len(release) or len(parts) <= best_len
                or not all(p.isascii() and p.isdigit() for p in parts)):
            continue
        if [_number(p) for p in parts] == release[:len(parts)]:
            best, best_len = v.strip(), len(parts)
    return best


def versioned_id(library_id: str, version: str | None, known: list[str] | None) -> str | None:
    """`/org/repo/<listed>` for the listed version that stands for the installed one
    (`matching_version`), or None."""
    listed = matching_version(version, known)
    return f"{library_id.rstrip('/')}/{listed}" if listed else None


# ----------------------------------------------------------------------------- grammars
# Package names, versions and library IDs come from files in a repository or from an API
# answer: hostile text. Nothing reaches the agent, the network or the store unless it
# matches its ecosystem's grammar here. Every check is one pass over the characters, after
# the length cap.

MAX_NAME = 214  # npm's own cap; the longest of the ecosystems
MAX_VERSION = 80
MAX_LIBRARY_ID = 256
MAX_LINE = 200

# Each grammar is a first character from one set and the rest from another (string methods,
# no `re`: the SessionStart fast path and the serve decision check names too).
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ALNUM_ = _ALNUM | {"_"}
_NPM_REST = _ALNUM_ | set(".~-")
_PYPI_REST = _ALNUM_ | set(".-")
_CRATE_REST = _ALNUM_ | {"-"}
_GO_REST = _ALNUM_ | set(".~-")
_GO_TAIL = _GO_REST | {"+"}
_COMPOSER_REST = _ALNUM_ | set(".-")
_VERSION_REST = _ALNUM_ | set(".+~!-")
_ID_PART = _ALNUM_ | set(".-")
_ID_VERSION_REST = _ID_PART | {"+"}


def _word(text: str, first: frozenset, rest: frozenset) -> bool:
    return bool(text) and text[0] in first and all(c in rest for c in text)


def _npm(name: str) -> bool:
    """Optional `@scope/`, then a name; both URL-safe (legacy names may hold capitals)."""
    if name.startswith("@"):
        scope, sep, name = name[1:].partition("/")
        if not sep or not _word(scope, _ALNUM_, _NPM_REST):
            return False
    return _word(name, _ALNUM_, _NPM_REST)


def _pypi(name: str) -> bool:
    """PEP 508: letters/digits at both ends, `._-` inside."""
    return _word(name, _ALNUM, _PYPI_REST) and name[-1] in _ALNUM


def _crates(name: str) -> bool:
    """A Rust crate name (Cargo's rule): an ASCII letter first, then letters, digits, `_`, `-` (64 at most)."""
    return len(name) <= 64 and name[0].isalpha() and _word(name, _ALNUM, _CRATE_REST)


def _go(name: str) -> bool:
    """Slash-separated elements of letters, digits and `-._~` (`+` in the tail ones)."""
    head, *tail = name.split("/")
    return (_word(head, _ALNUM, _GO_REST) and all(p and all(c in _GO_TAIL for c in p) for p in tail)
            and not any(p in (".", "..") for p in (head, *tail)))


def _gems(name: str) -> bool:
    return _word(name, _ALNUM_, _PYPI_REST)


def _composer(name: str) -> bool:
    vendor, sep, package = name.partition("/")
    return bool(sep) and _word(vendor, _ALNUM, _COMPOSER_REST) and _word(package, _ALNUM, _COMPOSER_REST)


_GRAMMARS = {"npm": _npm, "pypi": _pypi, "crates": _crates, "go": _go, "gems": _gems,
             "composer": _composer}
ECOSYSTEMS = tuple(_GRAMMARS)


def valid_name(name, ecosystem: str | None) -> bool:
    """Whether `name` is a well-formed package name of `ecosystem` (any ecosystem when None)."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME or not name.isascii():
        return False
    if ecosystem is None:
        return any(check(name) for check in _GRAMMARS.values())
    check = _GRAMMARS.get(ecosystem)
    return check is not None and check(name)


def valid_version(version) -> bool:
    """A version string: letters, digits and `._+~!-`, a letter or digit first, capped."""
    return (isinstance(version, str) and 0 < len(version) <= MAX_VERSION and version.isascii()
            and _word(version, _ALNUM, _VERSION_REST))


def split_library_id(library_id) -> tuple[str, str, str | None] | None:
    """`/owner/repo`, `/owner/repo/<version>` or `/owner/repo@<version>` -> (owner, repo,
    version or None); None unless it has the Context7 ID shape: letters, digits and `._-`
    (`+` too in the version), a letter or digit first (a repo may start with `.` or `_`, as
    `.github` does, but is never `.` or `..`); owner at most 100 characters, repo 150,
    version 64."""
    if (not isinstance(library_id, str) or not 3 < len(library_id) <= MAX_LIBRARY_ID
            or not library_id.isascii() or not library_id.startswith("/")):
        return None
    version: str | None
    head, at, version = library_id[1:].partition("@")
    parts = head.split("/")
    if not at and len(parts) == 3:
        version = parts.pop()
    elif not at:
        version = None
    if (len(parts) != 2 or not _word(parts[0], _ALNUM, _ID_PART) or len(parts[0]) > 100
            or not _word(parts[1], _ID_PART, _ID_PART) or parts[1][0] == "-" or len(parts[1]) > 150
            or parts[1] in (".", "..")):
        return None
    if version is not None and (not _word(version, _ALNUM, _ID_VERSION_REST) or len(version) > 64):
        return None
    return parts[0], parts[1], version


def valid_library_id(library_id) -> bool:
    """The Context7 ID shape: `/owner/repo`, optionally `/owner/repo/<version>` or
    `/owner/repo@<version>`, safe characters only."""
    return split_library_id(library_id) is not None


def checked_library_id(library_id) -> str | None:
    """`library_id` stripped of outer whitespace and trailing slashes when it has the
    Context7 ID shape, else None."""
    if not isinstance(library_id, str):
        return None
    lid = library_id.strip()
    while len(lid) > 1 and lid.endswith("/"):
        lid = lid[:-1]
    return lid if valid_library_id(lid) else None


def library_base(library_id: str | None) -> str | None:
    """`/Org/Repo[/version]` -> `/org/repo` (the key documents are pulled by)."""
    lid = (library_id or "").strip().rstrip("/")
    if not lid.startswith("/"):
        return None
    parts = [p for p in lid.split("/") if p]
    if len(parts) < 2:
        return None
    return f"/{parts[0]}/{parts[1].split('@', 1)[0]}".lower()
