"""Python ecosystem: requirements files, pyproject.toml (PEP 621, PEP 735, Poetry, uv, PDM),
poetry.lock and uv.lock (Pipfile and Pipfile.lock: memhooks.warm.lockfiles.pipenv)."""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Callable

from memhooks.warm.lockfiles import Dep, Manifest, dedupe, make_dep, table
from memhooks.warm.lockfiles import key_for as normalize
from memhooks.warm.lockfiles.pep508 import (
    _OPT_TAIL,
    _devish,
    _from_url,
    exact_pin,
    parse_pep508,
)

ECO = "pypi"
MAX_INCLUDE_DEPTH = 8
MAX_REQUIREMENT_LINES = 50_000  # logical lines read from one requirements file

# ------------------------------------------------------------------ requirements

def requirements_kind(path: str) -> str:
    base = posixpath.basename(path)
    stem = base.rsplit(".", 1)[0]
    return "dev" if _devish(stem) else "runtime"


def _logical_lines(text: str):
    buf = ""
    for line in text.splitlines():
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        line = buf + line
        buf = ""
        yield line
    if buf:
        yield buf


def _strip_comment(line: str) -> str:
    if line.lstrip().startswith("#"):
        return ""
    m = re.search(r"\s#", line)
    return line[: m.start()] if m else line


def _option(line: str, shorts: tuple[str, ...], longs: tuple[str, ...]) -> str | None:
    for o in longs:
        if line.startswith(o) and (len(line) == len(o) or line[len(o)] in " =\t"):
            return line[len(o) :].lstrip(" =\t").strip()
    for o in shorts:
        if line.startswith(o):
            return line[len(o) :].lstrip(" =\t").strip()
    return None


def parse_requirements(
    text: str,
    path: str,
    *,
    reader: Callable[[str], str | None] | None = None,
    _seen: set | None = None,
    _depth: int = 0,
    _constraints: dict | None = None,
) -> list[Dep]:
    """A pip requirements file. ``reader(relpath)`` returns an included file's text (or None);
    include paths are resolved relative to this file's directory, cycles and depth are bounded."""
    seen = _seen if _seen is not None else set()
    seen.add(posixpath.normpath(path))
    constraints: dict[str, str] = _constraints if _constraints is not None else {}
    kind = requirements_kind(path)
    out: list[Dep] = []
    here = posixpath.dirname(path)

    def include(target: str, as_constraints: bool):
        if reader is None or _depth >= MAX_INCLUDE_DEPTH or not target or "://" in target:
            return
        if target.startswith("/"):
            return
        rel = posixpath.normpath(posixpath.join(here, target))
        if rel.startswith("../") or rel == ".." or rel in seen:
            return
        seen.add(rel)
        try:
            sub = reader(rel)
        except (OSError, ValueError):  # unreadable, not UTF-8, a NUL in the path: left out
            sub = None
        if sub is None:
            return
        deps = parse_requirements(sub, rel, reader=reader, _seen=seen, _depth=_depth + 1,
                                  _constraints=constraints)
        if as_constraints:
            for d in deps:
                if d.version:
                    constraints.setdefault(d.key, d.version)
        else:
            out.extend(deps)

    # pip-compile / `uv pip compile` / `uv export` annotations: "# via flask" or a "# via"
    # block under a requirement. own[i] = (index in out, via entries) of this file's requirements
    own: list[tuple[int, list[str]]] = []
    via: list[str] | None = None  # the via list being filled (a "# via" block)
    for n, raw in enumerate(_logical_lines(text)):
        if n >= MAX_REQUIREMENT_LINES:
            break  # bounded work: no real requirements file is this long
        sraw = raw.strip()
        if sraw.startswith("#"):
            body = sraw[1:].strip()
            if body == "via" and own:
                via = own[-1][1]
            elif body.startswith("via ") and own:
                own[-1][1].append(body[4:].strip())
                via = None
            elif via is not None and body and sraw[1:2] == " " and sraw[2:3] == " ":
                via.append(body)  # "#   flask": an entry of a via block
            else:
                via = None
            continue
        via = None
        if "# via " in raw:  # --annotation-style=line: "flask==3.0  # via -r requirements.in"
            at = raw.find("# via ")
            inline = [e.strip() for e in raw[at + 6 :].split(",") if e.strip()]
        else:
            inline = None
        line = _strip_comment(raw).strip()
        if not line:
            continue
        if line.startswith("-"):
            inc = _option(line, ("-r",), ("--requirement",))
            if inc is not None:
                include(inc, False)
                continue
            con = _option(line, ("-c",), ("--constraint",))
            if con is not None:
                include(con, True)
                continue
            ed = _option(line, ("-e",), ("--editable",))
            if ed is not None:
                name, ver = _from_url(ed) if ("://" in ed or "#egg=" in ed) else (None, None)
                if name:
                    out.append(make_dep(name, ECO, ver, kind, path, None))
            continue
        m = _OPT_TAIL.search(line)
        if m:
            line = line[: m.start()].strip()
        if line.startswith((".", "/", "~")) or (line.endswith((".whl", ".zip", ".tar.gz")) and "/" in line and "://" not in line):
            continue  # a local path
        parsed = parse_pep508(line)
        if parsed is None:
            continue
        name, spec, ver = parsed
        own.append((len(out), inline or []))
        out.append(make_dep(name, ECO, ver, kind, path, spec))
    if any(v for _, v in own):
        _mark_transitive(out, own)
    if _depth == 0 and constraints:
        out = [
            Dep(d.name, d.key, d.ecosystem, constraints.get(d.key), d.kind, d.manifest, d.spec)
            if d.version is None and d.key in constraints else d
            for d in out
        ]
    return dedupe(out) if _depth == 0 else out


def _mark_transitive(out: list[Dep], own: list[tuple[int, list[str]]]) -> None:
    """A compiled requirements file: a requirement whose "via" entries all name other
    requirements of the same file is only there for them, so it is transitive. Entries that
    name an input (`-r requirements.in`, `svc (pyproject.toml)`, the project itself in
    `uv export`) make it direct; `-c` constraint entries don't count either way."""
    names = {out[i].key for i, _ in own}
    for i, entries in own:
        if not entries:
            continue
        refs = [e for e in entries if not e.startswith(("-c ", "--constraint"))]
        if not refs:
            continue
        if all(not e.startswith("-") and "(" not in e
               and normalize(e.split("[", 1)[0].strip(), ECO) in names for e in refs):
            d = out[i]
            out[i] = Dep(d.name, d.key, d.ecosystem, d.version, "transitive", d.manifest, d.spec)


# ------------------------------------------------------------------ pyproject.toml

def _poetry_spec(val) -> tuple[str | None, bool]:
    """(version spec, is_local) of a Poetry dependency value."""
    if isinstance(val, str):
        return val, False
    if isinstance(val, list):
        specs = [v["version"] for v in val if isinstance(v, dict) and isinstance(v.get("version"), str)]
        return (" || ".join(specs) or None), False
    if isinstance(val, dict):
        if "path" in val:
            return None, True
        v = val.get("version")
        return (v if isinstance(v, str) else None), False
    return None, False


_PY_MIN = re.compile(r"(?:>=|~=|\^|~|>|==)\s*(\d+)\.(\d+)")
_PY_BELOW = re.compile(r"""^\s*python(?:_full)?_version\s*(<=?)\s*['"](\d+)\.(\d+)(?:\.(\d+))?['"]\s*$""")


def _min_python(spec) -> tuple[int, int] | None:
    """The lowest Python a `requires-python` (or Poetry `python`) spec allows, when it says."""
    if not isinstance(spec, str):
        return None
    found = [(int(a), int(b)) for a, b in _PY_MIN.findall(spec)]
    return min(found) if found else None


def _never_installed(req: str, min_py: tuple[int, int] | None) -> bool:
    """`tomli>=2; python_version < "3.11"` in a project that requires Python >= 3.11: no
    installer resolves it (uv and Poetry leave it out of the lockfile), so it isn't a dep."""
    if min_py is None or ";" not in req:
        return False
    m = _PY_BELOW.match(req.split(";", 1)[1])
    if not m:
        return False
    bound = (int(m.group(2)), int(m.group(3)))
    if m.group(1) == "<" and not int(m.group(4) or 0):
        return min_py >= bound  # < 3.11: never with >= 3.11
    return min_py > bound  # <= 3.11 or < 3.11.2: 3.11.0 still could


def _pep508_list(items, kind: str, path: str, out: list[Dep], min_py: tuple[int, int] | None = None):
    if not isinstance(items, list):
        return
    for item in items:
        if isinstance(item, str):
            if min_py is not None and _never_installed(item, min_py):
                continue
            p = parse_pep508(item)
            if p:
                out.append(make_dep(p[0], ECO, p[2], kind, path, p[1]))


def read_pyproject(text: str, path: str) -> Manifest:
    data = tomllib.loads(text)
    out: list[Dep] = []
    project = table(data, "project")
    name = project.get("name") if isinstance(project.get("name"), str) else None
    min_py = _min_python(project.get("requires-python"))
    _pep508_list(project.get("dependencies"), "runtime", path, out, min_py)
    opt = project.get("optional-dependencies")
    if isinstance(opt, dict):
        for extra, items in opt.items():
            _pep508_list(items, "dev" if _devish(str(extra)) else "runtime", path, out, min_py)

    # PEP 735 dependency groups, with include-group (cycles ignored)
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        def expand(g: str, stack: tuple[str, ...]):
            items = groups.get(g)
            if not isinstance(items, list) or g in stack:
                return
            for item in items:
                if isinstance(item, str):
                    _pep508_list([item], "dev", path, out, min_py)
                elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                    expand(item["include-group"], stack + (g,))
        for g in groups:
            expand(g, ())

    tool = table(data, "tool")
    poetry = table(tool, "poetry")
    if poetry:
        if name is None and isinstance(poetry.get("name"), str):
            name = poetry["name"]
        sections = [("runtime", poetry.get("dependencies")), ("dev", poetry.get("dev-dependencies"))]
        pg = poetry.get("group")
        if isinstance(pg, dict):
            for gname, g in pg.items():
                if isinstance(g, dict):
                    sections.append(("runtime" if gname == "main" else "dev", g.get("dependencies")))
        for kind, sec in sections:
            if not isinstance(sec, dict):
                continue
            for dn, val in sec.items():
                if not isinstance(dn, str) or dn.lower() == "python":
                    continue
                spec, local = _poetry_spec(val)
                if local:
                    continue
                out.append(make_dep(dn, ECO, exact_pin(spec, bare_ok=True), kind, path, spec))

    members: list[str] = []
    exclude: list[str] = []
    uv = table(tool, "uv")
    if uv:
        _pep508_list(uv.get("dev-dependencies"), "dev", path, out)
        ws = uv.get("workspace")
        if isinstance(ws, dict):
            members = [m for m in ws.get("members") or [] if isinstance(m, str)]
            exclude = [m for m in ws.get("exclude") or [] if isinstance(m, str)]
    pdm = table(tool, "pdm")
    if isinstance(pdm.get("dev-dependencies"), dict):
        for items in pdm["dev-dependencies"].values():
            _pep508_list(items, "dev", path, out)
    return Manifest(dedupe(out), name, members, exclude)


def parse_pyproject(text: str, path: str) -> list[Dep]:
    return read_pyproject(text, path).deps


# ------------------------------------------------------------------ lockfiles

_PKG_HEAD = re.compile(r'^name = "([^"\n]+)"\n(?:version = "([^"\n]*)"\n)?(?:source = (\{[^\n]*\}|"[^"\n]*")\n)?')


def _package_chunks(text: str):
    """Yield (name, version, source, chunk, table) per `[[package]]` table of a uv/poetry lock.

    A fast path: only the head lines of each table are matched; the caller parses the few
    chunks it needs in full with tomllib. Raises ValueError when a table doesn't start the
    expected way (the caller then falls back to tomllib for the whole file). The last table
    (where a cut-off file is cut) is always parsed in full, with what follows it, so that a
    truncated lockfile fails; its parsed table is yielded as ``table`` (None for the others)."""
    parts = re.split(r"(?m)^\[\[package\]\]\s*\n", text)
    last = None
    if len(parts) > 1:
        try:
            last = tomllib.loads("[[package]]\n" + parts[-1])["package"][0]
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"last [[package]] table: {e}") from None
    n = len(parts) - 1
    for i, chunk in enumerate(parts[1:], 1):
        m = _PKG_HEAD.match(chunk)
        if not m:
            raise ValueError("unexpected [[package]] layout")
        yield m.group(1), m.group(2), m.group(3) or "", chunk, (last if i == n else None)


def _chunk_table(chunk: str) -> dict:
    # the chunk runs to the next [[package]]; drop any trailing top-level table
    cut = re.search(r"(?m)^\[(?!\[?package[\].])[^\n]*\]\s*$", chunk)
    if cut:
        chunk = chunk[: cut.start()]
    return tomllib.loads("[[package]]\n" + chunk)["package"][0]


def parse_poetry_lock(text: str, path: str) -> list[Dep]:
    """poetry.lock: every locked package, as transitive (pyproject.toml says which are direct)."""
    try:
        if 'type = "directory"' in text:
            raise ValueError("local packages: use the full parser")
        return dedupe([make_dep(n, ECO, v or None, "transitive", path) for n, v, _, _, _ in _package_chunks(text)])
    except ValueError:
        pass
    data = tomllib.loads(text)
    out = []
    for p in data.get("package") or []:
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            src = p.get("source")
            if isinstance(src, dict) and src.get("type") in ("directory", "file") and p.get("develop"):
                continue
            out.append(make_dep(p["name"], ECO, str(p.get("version") or "") or None, "transitive", path))
    return dedupe(out)


def _uv_packages(text: str) -> list[dict]:
    """The [[package]] tables of a uv.lock; tables of registry packages keep only name/version."""
    try:
        pkgs = []
        for name, version, source, chunk, table in _package_chunks(text):
            if source.startswith("{") and any(k in source for k in ("editable", "virtual", "workspace")):
                pkgs.append(table if table is not None else _chunk_table(chunk))
            else:
                pkgs.append({"name": name, "version": version, "source": {"registry": ""}})
        if pkgs or "[[package]]" not in text:
            if not pkgs:
                tomllib.loads(text)  # validate a lockfile without packages
            return pkgs
    except ValueError:
        pass
    return [p for p in tomllib.loads(text).get("package") or [] if isinstance(p, dict)]


def parse_uv_lock(text: str, path: str) -> list[Dep]:
    """uv.lock: the workspace's own packages (editable/virtual sources) give the direct deps."""
    pkgs = [p for p in _uv_packages(text) if isinstance(p.get("name"), str)]
    versions: dict[str, str] = {}
    local: set[str] = set()
    roots = []
    for p in pkgs:
        src = table(p, "source")
        key = normalize(p["name"], ECO)
        if "editable" in src or "virtual" in src or "workspace" in src:
            local.add(key)
            roots.append(p)
        elif p.get("version") is not None:
            versions.setdefault(key, str(p["version"]))
    out: list[Dep] = []

    def add(items, kind):
        for item in items or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                k = normalize(item["name"], ECO)
                if k not in local:
                    out.append(make_dep(item["name"], ECO, versions.get(k), kind, path))

    for p in roots:
        add(p.get("dependencies"), "runtime")
        opt = p.get("optional-dependencies")
        if isinstance(opt, dict):
            for extra, items in opt.items():
                add(items, "dev" if _devish(str(extra)) else "runtime")
        dev = p.get("dev-dependencies")
        if isinstance(dev, dict):
            for items in dev.values():
                add(items, "dev")
    for p in pkgs:
        k = normalize(p["name"], ECO)
        if k not in local:
            out.append(make_dep(p["name"], ECO, versions.get(k), "transitive", path))
    return dedupe(out)
