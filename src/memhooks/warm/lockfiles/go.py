"""Go: go.mod (require, `// indirect`, replace) and go.sum; go.work `use` for workspaces."""

from __future__ import annotations

from memhooks.warm.lockfiles import Dep, Manifest, dedupe, make_dep

ECO = "go"


def _directives(text: str):
    """Yield (verb, fields, comment) for each go.mod/go.work directive line, expanding blocks."""
    block = None
    for raw in text.splitlines():
        line, _, comment = raw.partition("//")
        line = line.strip()
        comment = comment.strip()
        if block is not None:
            if line == ")":
                block = None
                continue
            if line:
                yield block, line.split(), comment
            continue
        if not line:
            continue
        verb, _, rest = line.partition(" ")
        rest = rest.strip()
        if rest == "(":
            block = verb
            continue
        if rest.startswith("(") and rest.endswith(")"):
            rest = rest[1:-1].strip()
        yield verb, rest.split(), comment


def read_go_mod(text: str, path: str) -> Manifest:
    module = None
    req: list[tuple[str, str, bool]] = []
    repl: dict[str, str | None] = {}
    for verb, f, comment in _directives(text):
        if verb == "module" and f:
            module = f[0].strip('"')
        elif verb == "require" and len(f) >= 2:
            req.append((f[0].strip('"'), f[1], comment.startswith("indirect")))
        elif verb == "replace" and "=>" in f:
            i = f.index("=>")
            left, right = f[:i], f[i + 1 :]
            if not left or not right:
                continue
            # `new v1.2.3` keeps a version; a local path (`../x`) has none
            repl[left[0]] = right[1] if len(right) >= 2 else None
        elif verb not in ("module", "go", "toolchain", "require", "replace", "exclude", "retract",
                          "godebug", "tool", "ignore"):
            raise ValueError(f"go.mod: unknown directive {verb!r}")
    out = []
    for mod, ver, indirect in req:
        v = repl[mod] if mod in repl else ver
        out.append(make_dep(mod, ECO, v, "transitive" if indirect else "runtime", path, ver))
    return Manifest(dedupe(out), module, [], [])


def parse_go_mod(text: str, path: str) -> list[Dep]:
    return read_go_mod(text, path).deps


def _semver_key(v: str):
    core = v.lstrip("v").split("+", 1)[0]
    main, _, pre = core.partition("-")
    nums = []
    for x in main.split("."):
        nums.append(int(x) if x.isdigit() else 0)
    return (nums, pre == "", pre)


def parse_go_sum(text: str, path: str) -> list[Dep]:
    """go.sum: every module with a checksum; the highest version of a module wins."""
    best: dict[str, str] = {}
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if len(f) != 3 or not f[2].startswith("h1:"):
            raise ValueError(f"go.sum: bad line {line[:60]!r}")
        mod, ver = f[0], f[1]
        if ver.endswith("/go.mod"):
            ver = ver[: -len("/go.mod")]
        cur = best.get(mod)
        if cur is None or _semver_key(ver) > _semver_key(cur):
            best[mod] = ver
    return [make_dep(m, ECO, v, "transitive", path) for m, v in best.items()]


def read_go_work(text: str) -> list[str]:
    """Directories named by go.work `use` directives."""
    return [f[0].strip('"') for verb, f, _ in _directives(text) if verb == "use" and f]
