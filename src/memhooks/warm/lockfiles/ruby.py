"""Ruby: Gemfile (groups) and Gemfile.lock (GEM/GIT/PATH specs, DEPENDENCIES)."""

from __future__ import annotations

import re

from memhooks.warm.lockfiles import Dep, dedupe, exact_version, make_dep

ECO = "gems"
_GEM = re.compile(r"""^gem\s*\(?\s*(['"])([^'"]+)\1(.*)$""")
_STR = re.compile(r"""(['"])([^'"]*)\1""")
_SYM = re.compile(r""":(\w+)|(['"])(\w+)\2""")
_GROUP_OPT = re.compile(r"""\b(?:group|groups)\s*(?::|=>)\s*(\[[^\]]*\]|:\w+|['"]\w+['"])""")
_RUNTIME_GROUPS = {"default", "production", "runtime"}


def _groups_kind(groups: list[str]) -> str:
    if groups and not any(g in _RUNTIME_GROUPS for g in groups):
        return "dev"
    return "runtime"


def _strip_comment(line: str) -> str:
    q = None
    for i, c in enumerate(line):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "#":
            return line[:i]
    return line


_OPTS_START = re.compile(r",\s*(?:\w+:(?!:)|:\w+\s*=>)")
_BLOCK_DO = re.compile(r"\bdo\s*(\|[^|]*\|)?$")
_OPENERS = re.compile(r"^(?:if|unless|case|begin|while|until|def|class|module)\b")


def parse_gemfile(text: str, path: str) -> list[Dep]:
    out: list[Dep] = []
    stack: list[list[str] | None] = []  # one entry per open block: its groups, or None
    for raw in text.splitlines():
        line = _strip_comment(raw).strip()
        if not line:
            continue
        if line == "end" or line.startswith("end ") or line.startswith("end."):
            if stack:
                stack.pop()
            continue
        if line.startswith("group") and (do := _BLOCK_DO.search(line)):
            head = line[5 : do.start()]
            stack.append([m.group(1) or m.group(3) for m in _SYM.finditer(head)])
            continue
        m = _GEM.match(line)
        if m:
            name, rest = m.group(2), m.group(3)
            om = _OPTS_START.search(rest)
            positional = rest[: om.start()] if om else rest
            reqs = [s.group(2) for s in _STR.finditer(positional)]
            groups: list[str] = []
            for g in stack:
                if g:
                    groups.extend(g)
            gm = _GROUP_OPT.search(rest)
            if gm:
                groups.extend(x.group(1) or x.group(3) for x in _SYM.finditer(gm.group(1)))
            spec = ", ".join(reqs) or None
            ver = exact_version(reqs[0]) if len(reqs) == 1 else None
            out.append(make_dep(name, ECO, ver, _groups_kind(groups), path, spec))
            continue
        if _BLOCK_DO.search(line) or _OPENERS.match(line):
            stack.append(None)  # source/platforms/git/if blocks
    return dedupe(out)


def parse_gemfile_lock(text: str, path: str) -> list[Dep]:
    """Gemfile.lock: DEPENDENCIES are direct (runtime here; the Gemfile knows the groups),
    every spec under GEM/GIT/PATH is locked."""
    section = None
    in_specs = False
    locked: dict[str, str] = {}
    direct: list[tuple[str, str | None]] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        if raw[0] != " ":
            section = raw.strip()
            in_specs = False
            continue
        if section in ("GEM", "GIT", "PATH", "PLUGIN SOURCE"):
            if raw.strip() == "specs:":
                in_specs = True
                continue
            if in_specs and raw.startswith("    ") and not raw.startswith("     "):
                m = re.match(r"^\s+([^\s(]+)\s*\(([^)]*)\)", raw)
                if m:
                    ver = m.group(2).split("-", 1)[0] if re.search(r"-(x86|arm|aarch|java|universal|x64|mingw)", m.group(2)) else m.group(2)
                    locked.setdefault(m.group(1), ver)
        elif section == "DEPENDENCIES" and raw.startswith("  ") and not raw.startswith("   "):
            m = re.match(r"^\s+([^\s(!]+)!?\s*(?:\(([^)]*)\))?", raw)
            if m:
                direct.append((m.group(1), m.group(2)))
    if not locked and not direct and text.strip():
        raise ValueError("Gemfile.lock: no specs")
    out = [make_dep(n, ECO, locked.get(n), "runtime", path, spec) for n, spec in direct]
    out.extend(make_dep(n, ECO, v, "transitive", path) for n, v in locked.items())
    return dedupe(out)
