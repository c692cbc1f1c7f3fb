"""Rust: Cargo.toml (packages and workspaces) and Cargo.lock."""

from __future__ import annotations

import tomllib

from memhooks.warm.lockfiles import Dep, Manifest, dedupe, exact_version, make_dep

ECO = "crates"
_SECTIONS = (("dependencies", "runtime"), ("dev-dependencies", "dev"), ("build-dependencies", "dev"))


def _add_table(table, kind: str, path: str, out: list[Dep]):
    if not isinstance(table, dict):
        return
    for dn, val in table.items():
        name = dn
        spec = None
        if isinstance(val, str):
            spec = val
        elif isinstance(val, dict):
            if "path" in val and "version" not in val and not val.get("workspace"):
                continue  # a local crate
            if isinstance(val.get("package"), str):
                name = val["package"]  # renamed dependency: the crate's real name
            if isinstance(val.get("version"), str):
                spec = val["version"]
        out.append(make_dep(name, ECO, exact_version(spec.lstrip("="), full=True) if spec and spec.startswith("=") else None,
                            kind, path, spec))


def read_cargo_toml(text: str, path: str) -> Manifest:
    data = tomllib.loads(text)
    out: list[Dep] = []
    for section, kind in _SECTIONS:
        _add_table(data.get(section), kind, path, out)
    target = data.get("target")
    if isinstance(target, dict):
        for cfg in target.values():
            if isinstance(cfg, dict):
                for section, kind in _SECTIONS:
                    _add_table(cfg.get(section), kind, path, out)
    members: list[str] = []
    exclude: list[str] = []
    ws = data.get("workspace")
    if isinstance(ws, dict):
        # shared declarations: counted as direct runtime deps of the workspace
        _add_table(ws.get("dependencies"), "runtime", path, out)
        members = [m for m in ws.get("members") or [] if isinstance(m, str)]
        exclude = [m for m in ws.get("exclude") or [] if isinstance(m, str)]
    pkg = data.get("package")
    name = pkg.get("name") if isinstance(pkg, dict) and isinstance(pkg.get("name"), str) else None
    return Manifest(dedupe(out), name, members, exclude)


def parse_cargo_toml(text: str, path: str) -> list[Dep]:
    return read_cargo_toml(text, path).deps


def parse_cargo_lock(text: str, path: str) -> list[Dep]:
    """Cargo.lock: packages without a `source` are the workspace's own crates; their
    `dependencies` are direct (runtime here; Cargo.toml tells dev from runtime)."""
    data = tomllib.loads(text)
    pkgs = [p for p in data.get("package") or [] if isinstance(p, dict) and isinstance(p.get("name"), str)]
    local = {p["name"] for p in pkgs if not p.get("source")}
    by_name: dict[str, str | None] = {}
    for p in pkgs:
        if p.get("source"):
            by_name.setdefault(p["name"], str(p.get("version") or "") or None)
    out: list[Dep] = []
    for p in pkgs:
        if p.get("source"):
            continue
        for d in p.get("dependencies") or []:
            if not isinstance(d, str):
                continue
            parts = d.split(" ")  # "name", "name version" or "name version (source)"
            n = parts[0]
            if n in local:
                continue
            v = parts[1] if len(parts) > 1 else by_name.get(n)
            out.append(make_dep(n, ECO, v, "runtime", path))
    for p in pkgs:
        if p.get("source"):
            out.append(make_dep(p["name"], ECO, str(p.get("version") or "") or None, "transitive", path))
    return dedupe(out)
