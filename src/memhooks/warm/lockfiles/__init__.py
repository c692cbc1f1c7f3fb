"""Pure parsers for dependency manifests and lockfiles (standard library only).

Every parser has the signature ``parse_<format>(text: str, path: str) -> list[Dep]``:
it gets the file's text and its path relative to the project root (recorded as
``Dep.manifest``) and does no file IO. The one exception is requirements files,
whose ``-r``/``-c`` includes are read through a ``reader`` callback.

``PARSERS`` maps file-name patterns to parsers; ``parser_for(filename)`` picks one.
Parser modules are imported lazily, on first use, so importing this package is cheap.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memhooks.names import normalize

__all__ = [
    "Dep",
    "Manifest",
    "KINDS",
    "KIND_ORDER",
    "PARSERS",
    "parser_for",
    "make_dep",
    "dedupe",
]

KINDS = ("runtime", "dev", "transitive")
#: lower is better
KIND_ORDER = {"runtime": 0, "dev": 1, "transitive": 2}


@dataclass(frozen=True, slots=True)
class Dep:
    """One dependency as one file records it."""

    name: str  # as written
    key: str  # memhooks.names.normalize(name, ecosystem)
    ecosystem: str  # npm, pypi, go, crates, gems, composer
    version: str | None  # installed / locked version, when the file says it
    kind: str  # "runtime" | "dev" | "transitive"
    manifest: str  # path of the file, relative to the project root
    spec: str | None = None  # the manifest's range/requirement (e.g. "^1.2"), when given


@dataclass(slots=True)
class Manifest:
    """A manifest's deps plus what the project scan needs to find workspace members."""

    deps: list[Dep] = field(default_factory=list)
    name: str | None = None  # the package's own name (a local package, not a dep)
    members: list[str] = field(default_factory=list)  # workspace member globs
    exclude: list[str] = field(default_factory=list)  # workspace exclude globs


_KEYS: dict[tuple[str, str], str] = {}


def key_for(name: str, ecosystem: str) -> str:
    """``memhooks.names.normalize`` with a memo (lockfiles repeat the same names a lot)."""
    k = (name, ecosystem)
    v = _KEYS.get(k)
    if v is None:
        if len(_KEYS) > 50_000:
            _KEYS.clear()
        v = _KEYS[k] = normalize(name, ecosystem)
    return v


def make_dep(
    name: str,
    ecosystem: str,
    version: str | None,
    kind: str,
    manifest: str,
    spec: str | None = None,
) -> Dep:
    name = name.strip()
    return Dep(name, key_for(name, ecosystem), ecosystem, version or None, kind, manifest, spec or None)


def table(data: dict, key: str) -> dict:
    """``data[key]`` when it is a table (a dict), else {}: parsed lockfile sections."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def dedupe(deps: list[Dep]) -> list[Dep]:
    """One Dep per key, in first-seen order: the best kind wins, then a known version."""
    best: dict[tuple[str, str], Dep] = {}
    for d in deps:
        k = (d.ecosystem, d.key)
        cur = best.get(k)
        if cur is None:
            best[k] = d
            continue
        ck, dk = KIND_ORDER[cur.kind], KIND_ORDER[d.kind]
        if dk < ck:
            if d.version is None and cur.version is not None:
                d = Dep(d.name, d.key, d.ecosystem, cur.version, d.kind, d.manifest, d.spec or cur.spec)
            best[k] = d
        elif cur.version is None and d.version is not None:
            best[k] = Dep(cur.name, cur.key, cur.ecosystem, d.version, cur.kind, cur.manifest, cur.spec or d.spec)
    return list(best.values())


_EXACT_SEMVER = re.compile(r"^=?v?\d+(\.\d+){0,3}([-+][0-9A-Za-z.+-]+)?$")
_FULL_SEMVER = re.compile(r"^=?v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$")


def exact_version(spec: str | None, full: bool = False) -> str | None:
    """The version an npm/cargo/composer/gem spec pins exactly (``1.2.3``, ``=1.2.3``), else None.

    ``full=True`` (npm, cargo) wants all three of major.minor.patch: there ``4`` and ``4.17``
    are ranges (``4.x``, ``4.17.x``), not versions."""
    if not spec:
        return None
    s = spec.strip()
    if (_FULL_SEMVER if full else _EXACT_SEMVER).match(s):
        return s.lstrip("=").lstrip("v")
    return None


# ---------------------------------------------------------------- registry

def _lazy(module: str, func: str) -> Callable[..., list[Dep]]:
    def call(text: str, path: str, **kw):
        mod = importlib.import_module(f"memhooks.warm.lockfiles.{module}")
        return getattr(mod, func)(text, path, **kw)

    call.__name__ = func
    call.__qualname__ = func
    call.module = module  # type: ignore[attr-defined]
    call.func = func  # type: ignore[attr-defined]
    return call


#: a pip requirements file (also any *.txt or *.in in a requirements/ folder)
REQUIREMENTS = _lazy("python", "parse_requirements")

#: file-name pattern (fnmatch, matched against the base name) -> parser
PARSERS: dict[str, Callable[..., list[Dep]]] = {
    "package.json": _lazy("npm", "parse_package_json"),
    "package-lock.json": _lazy("npm", "parse_package_lock"),
    "npm-shrinkwrap.json": _lazy("npm", "parse_package_lock"),
    "pnpm-lock.yaml": _lazy("npm", "parse_pnpm_lock"),
    "yarn.lock": _lazy("npm", "parse_yarn_lock"),
    "bun.lock": _lazy("npm", "parse_bun_lock"),
    "pyproject.toml": _lazy("python", "parse_pyproject"),
    "poetry.lock": _lazy("python", "parse_poetry_lock"),
    "uv.lock": _lazy("python", "parse_uv_lock"),
    "Pipfile": _lazy("pipenv", "parse_pipfile"),
    "Pipfile.lock": _lazy("pipenv", "parse_pipfile_lock"),
    "Cargo.toml": _lazy("rust", "parse_cargo_toml"),
    "Cargo.lock": _lazy("rust", "parse_cargo_lock"),
    "go.mod": _lazy("go", "parse_go_mod"),
    "go.sum": _lazy("go", "parse_go_sum"),
    "Gemfile": _lazy("ruby", "parse_gemfile"),
    "gems.rb": _lazy("ruby", "parse_gemfile"),
    "Gemfile.lock": _lazy("ruby", "parse_gemfile_lock"),
    "gems.locked": _lazy("ruby", "parse_gemfile_lock"),
    "composer.json": _lazy("php", "parse_composer_json"),
    "composer.lock": _lazy("php", "parse_composer_lock"),
    # requirements files (pattern entries; matched after the exact names)
    "*requirements*.txt": REQUIREMENTS,
    "requirements*.in": REQUIREMENTS,
}

_EXACT = {k: v for k, v in PARSERS.items() if not any(c in k for c in "*?[")}
_PATTERNS = [(k, v) for k, v in PARSERS.items() if k not in _EXACT]

#: files that only say which deps are locked (their direct-ness comes from a manifest)
LOCKFILES = frozenset(
    {
        "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock",
        "poetry.lock", "uv.lock", "Pipfile.lock", "Cargo.lock", "go.sum", "Gemfile.lock",
        "gems.locked", "composer.lock",
    }
)


def parser_for(filename: str) -> Callable[..., list[Dep]] | None:
    """The parser for a file's base name, or None."""
    p = _EXACT.get(filename)
    if p is not None:
        return p
    low = filename.lower()
    for pat, parser in _PATTERNS:
        if fnmatch.fnmatchcase(low, pat):
            return parser
    return None
