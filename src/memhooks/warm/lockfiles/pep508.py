"""PEP 508 requirement strings and exact pins: the pieces the Python manifest and lockfile
parsers (memhooks.warm.lockfiles.python) share."""

from __future__ import annotations

import re

_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$", re.S)
_EXACT = re.compile(r"^(?:===?)\s*([0-9][0-9A-Za-z.+!_-]*)$")
_BARE = re.compile(r"^([0-9][0-9A-Za-z.+!_-]*)$")
_OPT_TAIL = re.compile(r"\s--?[A-Za-z]")
_DEV_TOKENS = frozenset(
    "dev devel develop development test tests testing lint linting linters docs doc "
    "documentation ci typing types mypy style tox qa check checks format fmt bench benchmark "
    "benchmarks".split()
)


def _devish(label: str) -> bool:
    return any(t in _DEV_TOKENS for t in re.split(r"[-_.\s/]+", label.lower()) if t)


def exact_pin(spec: str | None, bare_ok: bool = False) -> str | None:
    """`==1.2.3` / `===1.2.3` (and a bare `1.2.3` where the format allows it) -> `1.2.3`."""
    if not spec:
        return None
    s = spec.strip().strip("()").strip()
    m = _EXACT.match(s) or (_BARE.match(s) if bare_ok else None)
    if m and "*" not in s:
        return m.group(1)
    return None


def _from_url(url: str) -> tuple[str | None, str | None]:
    """(name, version) from a `#egg=` fragment or a wheel/sdist file name in a URL."""
    frag = url.partition("#")[2]
    for part in frag.split("&"):
        if part.startswith("egg="):
            egg = part[4:]
            m = _NAME.match(egg)
            return (m.group(1) if m else egg or None), None
    base = url.partition("#")[0].partition("?")[0].rstrip("/").rsplit("/", 1)[-1]
    if base.endswith(".whl"):
        bits = base[:-4].split("-")
        if len(bits) >= 2:
            return bits[0], bits[1]
    for ext in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
        if base.endswith(ext):
            stem = base[: -len(ext)]
            name, _, ver = stem.rpartition("-")
            if name and ver[:1].isdigit():
                return name, ver
    return None, None


def parse_pep508(req: str) -> tuple[str, str | None, str | None] | None:
    """`name[extras] (spec) ; marker` -> (name, spec, exact version) or None."""
    req = req.strip()
    if not req:
        return None
    if "://" in req.split("@", 1)[0] or req.startswith(("git+", "hg+", "svn+", "bzr+")):
        name, ver = _from_url(req)
        return (name, None, ver) if name else None
    m = _NAME.match(req)
    if not m:
        return None
    name, _, rest = m.groups()
    rest = rest.strip()
    if rest and rest[0] not in "<>=!~(;@,-":
        return None  # not a requirement: words after the name (`left SYSTEM NOTICE==1`)
    if rest.startswith("@"):
        url = rest[1:].strip()
        url = re.split(r"\s+;", url, maxsplit=1)[0].strip()
        _, ver = _from_url(url)
        return name, url or None, ver
    spec = rest.split(";", 1)[0].strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1].strip()
    return name, spec or None, exact_pin(spec)
