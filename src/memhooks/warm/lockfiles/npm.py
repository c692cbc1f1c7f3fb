"""npm ecosystem: package.json, package-lock.json (v1-v3), pnpm-lock.yaml (v5.4-v9),
yarn.lock (classic v1 and berry), bun.lock (text, JSONC)."""

from __future__ import annotations

import json
import re

from memhooks.warm.lockfiles import Dep, Manifest, dedupe, exact_version, make_dep, table
from memhooks.warm.lockfiles._yaml import loads

ECO = "npm"

# (section, kind) in emission order; dedupe keeps the best kind
_SECTIONS = (
    ("dependencies", "runtime"),
    ("optionalDependencies", "runtime"),
    ("peerDependencies", "runtime"),
    ("devDependencies", "dev"),
)
_LOCAL_PROTOCOLS = ("workspace:", "link:", "file:", "portal:")


def _ver(v) -> str | None:
    """A lockfile version string if it looks like one (not a URL, path or protocol)."""
    if not isinstance(v, str) or not v or not v[0].isdigit():
        return None
    return v


def _split_ident(ident: str) -> tuple[str, str]:
    """`@scope/name@range` -> (`@scope/name`, `range`); no range -> (ident, "")."""
    at = ident.find("@", 1)
    if at < 0:
        return ident, ""
    return ident[:at], ident[at + 1 :]


def _alias(name: str, spec: str) -> tuple[str, str]:
    """`"alias": "npm:real@^1"` -> (`real`, `^1`)."""
    if spec.startswith("npm:"):
        real, rng = _split_ident(spec[4:])
        if real:
            return real, rng
    return name, spec


# ------------------------------------------------------------------ package.json

def read_package_json(text: str, path: str) -> Manifest:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("package.json is not an object")
    out: list[Dep] = []
    for section, kind in _SECTIONS:
        sec = data.get(section)
        if not isinstance(sec, dict):
            continue
        for name, spec in sec.items():
            if not isinstance(name, str) or not name:
                continue
            spec = spec if isinstance(spec, str) else ""
            if spec.startswith(_LOCAL_PROTOCOLS):
                continue
            real, rng = _alias(name, spec)
            out.append(make_dep(real, ECO, exact_version(rng, full=True), kind, path, spec or None))
    ws = data.get("workspaces")
    if isinstance(ws, dict):
        ws = ws.get("packages")
    members = [w for w in ws if isinstance(w, str)] if isinstance(ws, list) else []
    name = data.get("name") if isinstance(data.get("name"), str) else None
    return Manifest(dedupe(out), name, [m for m in members if not m.startswith("!")],
                    [m[1:] for m in members if m.startswith("!")])


def parse_package_json(text: str, path: str) -> list[Dep]:
    return read_package_json(text, path).deps


# ------------------------------------------------------------------ package-lock.json

def _direct_from_manifest(entry: dict) -> list[tuple[str, str, str]]:
    """(name, spec, kind) of the direct deps a lockfile's package entry declares."""
    out = []
    for section, kind in _SECTIONS:
        sec = entry.get(section)
        if isinstance(sec, dict):
            for name, spec in sec.items():
                if isinstance(name, str) and name:
                    out.append((name, spec if isinstance(spec, str) else "", kind))
    return out


def parse_package_lock(text: str, path: str) -> list[Dep]:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("package-lock.json is not an object")
    out: list[Dep] = []
    packages = data.get("packages")
    if isinstance(packages, dict) and packages:
        # v2 / v3: "" is the root project, "packages/x" are workspace manifests,
        # "node_modules/..." (possibly nested) are installed packages.
        local_dirs = []
        local_names = set()
        for loc, entry in packages.items():
            if not isinstance(entry, dict):
                continue
            if loc == "" or "node_modules/" not in loc:
                local_dirs.append(loc)
                if isinstance(entry.get("name"), str):
                    local_names.add(entry["name"])
            elif entry.get("link"):
                local_names.add(loc.rsplit("node_modules/", 1)[1])
        for loc in local_dirs:
            entry = packages[loc]
            prefix = loc + "/" if loc else ""
            for name, spec, kind in _direct_from_manifest(entry):
                if spec.startswith(_LOCAL_PROTOCOLS) or name in local_names:
                    continue
                inst = packages.get(f"{prefix}node_modules/{name}") or packages.get(f"node_modules/{name}")
                version = None
                real = name
                if isinstance(inst, dict) and not inst.get("link"):
                    version = _ver(inst.get("version"))
                    if isinstance(inst.get("name"), str):
                        real = inst["name"]
                else:
                    real, _ = _alias(name, spec)
                out.append(make_dep(real, ECO, version, kind, path, spec or None))
        for loc, entry in packages.items():
            if "node_modules/" not in loc or not isinstance(entry, dict) or entry.get("link"):
                continue
            own = entry.get("name")
            name = own if isinstance(own, str) else loc.rsplit("node_modules/", 1)[1]
            if name in local_names:
                continue
            out.append(make_dep(name, ECO, _ver(entry.get("version")), "transitive", path))
        return dedupe(out)
    # v1: nested "dependencies"; no record of which ones are direct
    stack = [data.get("dependencies")]
    while stack:
        deps = stack.pop(0)
        if not isinstance(deps, dict):
            continue
        for name, entry in deps.items():
            if not isinstance(entry, dict) or not isinstance(name, str):
                continue
            version = entry.get("version")
            real = name
            if isinstance(version, str) and version.startswith("npm:"):
                real, version = _split_ident(version[4:])
            if isinstance(version, str) and version.startswith("file:"):
                continue
            out.append(make_dep(real, ECO, _ver(version), "transitive", path))
            if "dependencies" in entry:
                stack.append(entry["dependencies"])
    return dedupe(out)


# ------------------------------------------------------------------ pnpm-lock.yaml

def _pnpm_version(v, old: bool) -> str | None:
    if isinstance(v, dict):
        v = v.get("version")
    if not isinstance(v, str) or v.startswith(("link:", "file:")):
        return None
    p = v.find("(")
    if p > 0:
        v = v[:p]
    if old:
        v = v.split("_", 1)[0]
    return _ver(v)


def _pnpm_pkg_key(key: str, old: bool) -> tuple[str, str | None]:
    k = key[1:] if key.startswith("/") else key
    p = k.find("(")
    if p > 0:
        k = k[:p]
    at = k.find("@", 1)
    if at > 0:
        name, ver = k[:at], k[at + 1 :]
    else:  # lockfile v5: /name/1.2.3_peer
        name, _, ver = k.rpartition("/")
    if old:
        ver = ver.split("_", 1)[0]
    return name, _ver(ver)


def parse_pnpm_lock(text: str, path: str) -> list[Dep]:
    data = loads(text)
    if not isinstance(data, dict):
        raise ValueError("pnpm-lock.yaml is not a mapping")
    lv = str(data.get("lockfileVersion") or "")
    try:
        old = float(lv) < 6
    except ValueError:
        old = False
    importers = data.get("importers")
    if not isinstance(importers, dict):
        importers = {".": data}  # single-project lockfile (v5/v6): sections at the top
    out: list[Dep] = []
    for imp in importers.values():
        if not isinstance(imp, dict):
            continue
        specifiers = table(imp, "specifiers")
        for section, kind in (("dependencies", "runtime"), ("optionalDependencies", "runtime"),
                              ("devDependencies", "dev")):
            sec = imp.get(section)
            if not isinstance(sec, dict):
                continue
            for name, val in sec.items():
                raw = val.get("version") if isinstance(val, dict) else val
                if isinstance(raw, str) and raw.startswith("link:"):
                    continue
                spec = val.get("specifier") if isinstance(val, dict) else specifiers.get(name)
                if isinstance(spec, str) and spec.startswith(_LOCAL_PROTOCOLS):
                    continue
                real = name
                if isinstance(raw, str) and not raw[:1].isdigit() and "@" in raw[1:]:
                    # aliased: version is "real@1.2.3" (or "/real@1.2.3" in v6)
                    real, v = _pnpm_pkg_key(raw, old)
                    version = v
                else:
                    version = _pnpm_version(val, old)
                out.append(make_dep(real, ECO, version, kind, path, spec if isinstance(spec, str) else None))
    pk = data.get("packages")
    if isinstance(pk, dict):
        for key, entry in pk.items():
            if not isinstance(key, str):
                continue
            name, version = _pnpm_pkg_key(key, old)
            if isinstance(entry, dict):
                if isinstance(entry.get("name"), str):
                    name = entry["name"]
                if isinstance(entry.get("version"), str):
                    version = _ver(entry["version"]) or version
            if name:
                out.append(make_dep(name, ECO, version, "transitive", path))
    return dedupe(out)


def read_pnpm_workspace(text: str) -> list[str]:
    """`packages:` globs of a pnpm-workspace.yaml (negations start with `!`)."""
    data = loads(text)
    if isinstance(data, dict) and isinstance(data.get("packages"), list):
        return [p for p in data["packages"] if isinstance(p, str)]
    return []


# ------------------------------------------------------------------ yarn.lock

def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        return s[1:-1]
    return s


def parse_yarn_lock(text: str, path: str) -> list[Dep]:
    if "__metadata:" in text[:2000]:
        return parse_yarn_berry_lock(text, path)
    return parse_yarn_classic_lock(text, path)


def parse_yarn_classic_lock(text: str, path: str) -> list[Dep]:
    """yarn.lock v1. The file doesn't say which entries are direct, and may lock several
    versions of one package (``debug@2.6.9`` and ``debug@^4.3.7``): each version is kept as its
    own Dep whose ``spec`` lists the ranges it resolves (``"^4.3.7, ^4.3.5"``), so that the
    scan can pick the one a manifest's range asks for."""
    out: list[Dep] = []
    seen: dict[tuple[str, str | None], int] = {}
    name = None
    ranges: list[str] = []
    seen_header = False
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        if line[0] != " ":
            if not line.endswith(":"):
                raise ValueError(f"yarn.lock: unexpected line {line[:40]!r}")
            descs = [_unquote(d) for d in line[:-1].split(", ")]
            name, rng = _split_ident(descs[0])
            if rng.startswith("npm:"):
                real, _ = _split_ident(rng[4:])
                name = real or name
            ranges = [_split_ident(d)[1] for d in descs]
            seen_header = True
            continue
        if name and line.startswith("  version "):
            version = _ver(_unquote(line[10:]))
            k = (name, version)
            i = seen.get(k)
            if i is None:
                seen[k] = len(out)
                out.append(make_dep(name, ECO, version, "transitive", path, ", ".join(ranges)))
            else:  # same version under another alias: add its ranges
                d = out[i]
                out[i] = Dep(d.name, d.key, d.ecosystem, d.version, d.kind, d.manifest,
                             ", ".join(filter(None, (d.spec, *ranges))))
            name = None
    if not seen_header and text.strip() and not text.lstrip().startswith("#"):
        raise ValueError("yarn.lock: no entries")
    if name is not None or (seen_header and not text.endswith("\n")):
        # yarn ends the file with a newline and every entry with a version
        raise ValueError("yarn.lock: truncated (the last entry is incomplete)")
    return out


def parse_yarn_berry_lock(text: str, path: str) -> list[Dep]:
    data = loads(text)
    if not isinstance(data, dict):
        raise ValueError("yarn.lock is not a mapping")
    by_desc: dict[str, str | None] = {}
    direct: list[tuple[str, str, str]] = []
    trans: list[Dep] = []
    local: set[str] = set()
    for key, entry in data.items():
        if key == "__metadata" or not isinstance(entry, dict) or not isinstance(key, str):
            continue
        descs = [d.strip() for d in key.split(",")]
        name, rng = _split_ident(descs[0])
        resolution = entry.get("resolution")
        if not isinstance(resolution, str):
            resolution = ""
        if "@workspace:" in resolution or rng.startswith("workspace:"):
            local.add(name)
            for section, kind in (("dependencies", "runtime"), ("peerDependencies", "runtime"),
                                  ("devDependencies", "dev")):
                sec = entry.get(section)
                if isinstance(sec, dict):
                    for dn, spec in sec.items():
                        direct.append((dn, spec if isinstance(spec, str) else "", kind))
            continue
        version = _ver(entry.get("version"))
        for d in descs:
            by_desc[d] = version
        if rng.startswith("patch:"):
            continue
        if rng.startswith("npm:") and "@" in rng[5:]:
            real, _ = _split_ident(rng[4:])
            name = real or name
        trans.append(make_dep(name, ECO, version, "transitive", path))
    out: list[Dep] = []
    for dn, spec, kind in direct:
        if dn in local or spec.startswith(_LOCAL_PROTOCOLS):
            continue
        desc_spec = spec if ":" in spec else "npm:" + spec
        version = by_desc.get(f"{dn}@{desc_spec}")
        real = dn
        if spec.startswith("npm:") and "@" in spec[5:]:
            real, _ = _split_ident(spec[4:])
        clean = spec[4:] if spec.startswith("npm:") else spec
        out.append(make_dep(real, ECO, version, kind, path, clean or None))
    out.extend(d for d in trans if d.name not in local)
    return dedupe(out)


# ------------------------------------------------------------------ bun.lock

_JSONC_COMMENTS = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_JSONC_COMMAS = re.compile(r'("(?:\\.|[^"\\])*")|,(\s*[}\]])')


def loads_jsonc(text: str):
    """JSON with comments and trailing commas."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    if "/" in text:
        text = _JSONC_COMMENTS.sub(lambda m: m.group(1) or "", text)
    return json.loads(_JSONC_COMMAS.sub(lambda m: m.group(1) or m.group(2), text))


def parse_bun_lock(text: str, path: str) -> list[Dep]:
    data = loads_jsonc(text)
    if not isinstance(data, dict):
        raise ValueError("bun.lock is not an object")
    pk = table(data, "packages")
    local: set[str] = set()
    for key, val in pk.items():
        if isinstance(val, list) and val and isinstance(val[0], str) and "@workspace:" in val[0]:
            local.add(key)
    ws = table(data, "workspaces")
    for w in ws.values():
        if isinstance(w, dict) and isinstance(w.get("name"), str):
            local.add(w["name"])
    out: list[Dep] = []
    for wpath, w in ws.items():
        if not isinstance(w, dict):
            continue
        for name, spec, kind in _direct_from_manifest(w):
            if name in local or spec.startswith(_LOCAL_PROTOCOLS):
                continue
            # a workspace's own copy of a package is keyed by the workspace's name
            # ("@scope/pkg/dep"); older bun versions used its path
            entry = None
            if wpath:
                wname = w.get("name")
                if isinstance(wname, str) and wname:
                    entry = pk.get(f"{wname}/{name}")
                entry = entry or pk.get(f"{wpath}/{name}")
            entry = entry or pk.get(name)
            version = None
            real = name
            if isinstance(entry, list) and entry and isinstance(entry[0], str):
                real, v = _split_ident(entry[0])
                version = _ver(v)
            out.append(make_dep(real or name, ECO, version, kind, path, spec or None))
    for key, val in pk.items():
        if not (isinstance(val, list) and val and isinstance(val[0], str)) or key in local:
            continue
        name, v = _split_ident(val[0])
        if name in local or v.startswith("workspace:"):
            continue
        out.append(make_dep(name, ECO, _ver(v), "transitive", path))
    return dedupe(out)
