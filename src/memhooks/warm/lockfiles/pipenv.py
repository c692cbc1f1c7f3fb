"""Pipenv: Pipfile and Pipfile.lock."""

from __future__ import annotations

import json
import tomllib

from memhooks.warm.lockfiles import Dep, dedupe, make_dep
from memhooks.warm.lockfiles.pep508 import exact_pin

ECO = "pypi"


def parse_pipfile(text: str, path: str) -> list[Dep]:
    data = tomllib.loads(text)
    out: list[Dep] = []
    for section, kind in (("packages", "runtime"), ("dev-packages", "dev")):
        sec = data.get(section)
        if not isinstance(sec, dict):
            continue
        for name, val in sec.items():
            if isinstance(val, dict):
                if "path" in val or "file" in val and "://" not in str(val.get("file")):
                    continue
                spec = val.get("version") if isinstance(val.get("version"), str) else None
            else:
                spec = val if isinstance(val, str) else None
            if spec == "*":
                spec = None
            out.append(make_dep(name, ECO, exact_pin(spec), kind, path, spec))
    return dedupe(out)


def parse_pipfile_lock(text: str, path: str) -> list[Dep]:
    """Pipfile.lock: resolved packages of `default` and `develop`, as transitive (Pipfile says
    which are direct)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("Pipfile.lock is not an object")
    out: list[Dep] = []
    for section in ("default", "develop"):
        sec = data.get(section)
        if not isinstance(sec, dict):
            continue
        for name, val in sec.items():
            if not isinstance(val, dict):
                continue
            if "path" in val:
                continue
            v = val.get("version")
            out.append(make_dep(name, ECO, exact_pin(v) if isinstance(v, str) else None, "transitive", path))
    return dedupe(out)
