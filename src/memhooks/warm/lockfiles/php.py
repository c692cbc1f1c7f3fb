"""PHP: composer.json (require, require-dev) and composer.lock (packages, packages-dev)."""

from __future__ import annotations

import json

from memhooks.warm.lockfiles import Dep, Manifest, dedupe, exact_version, make_dep

ECO = "composer"
_PLATFORM = ("php", "hhvm", "composer-plugin-api", "composer-runtime-api", "composer")


def _is_platform(name: str) -> bool:
    n = name.lower()
    return n in _PLATFORM or n.startswith(("ext-", "lib-", "php-")) or "/" not in n


def read_composer_json(text: str, path: str) -> Manifest:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("composer.json is not an object")
    out: list[Dep] = []
    for section, kind in (("require", "runtime"), ("require-dev", "dev")):
        sec = data.get(section)
        if not isinstance(sec, dict):
            continue
        for name, spec in sec.items():
            if not isinstance(name, str) or _is_platform(name):
                continue
            spec = spec if isinstance(spec, str) else None
            out.append(make_dep(name, ECO, exact_version(spec), kind, path, spec))
    name = data.get("name") if isinstance(data.get("name"), str) else None
    return Manifest(dedupe(out), name, [], [])


def parse_composer_json(text: str, path: str) -> list[Dep]:
    return read_composer_json(text, path).deps


def parse_composer_lock(text: str, path: str) -> list[Dep]:
    """composer.lock: every locked package, as transitive (composer.json says which are direct)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("composer.lock is not an object")
    out: list[Dep] = []
    for section in ("packages", "packages-dev"):
        for p in data.get(section) or []:
            if isinstance(p, dict) and isinstance(p.get("name"), str) and not _is_platform(p["name"]):
                v = p.get("version")
                out.append(make_dep(p["name"], ECO, v if isinstance(v, str) else None, "transitive", path))
    return dedupe(out)
