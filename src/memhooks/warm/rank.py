"""Rank scanned dependencies for SessionStart warming (standard library only)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from memhooks.config import top_n
from memhooks.warm.agree import repo_of_url
from memhooks.warm.lockfiles import KIND_ORDER, LOCKFILES, Dep

__all__ = ["RankedDep", "rank", "candidates", "is_stub", "is_platform_binary", "default_top_n",
           "DEFAULT_TOP_N"]

DEFAULT_TOP_N = 20


@dataclass(frozen=True, slots=True)
class RankedDep:
    name: str  # as written by the best-ranked record
    key: str  # normalised
    ecosystem: str
    version: str | None  # a locked/installed version when any file gave one
    kind: str  # best kind over all files: runtime > dev > transitive
    manifests: int  # how many distinct files reference it
    repository: str | None = None  # "owner/repo" when a manifest's spec is a repository URL
    # the file (relative to the project) that gave `version`: where it came from, not what it is
    version_from: str | None = field(default=None, compare=False)


def is_stub(ecosystem: str, key: str) -> bool:
    """Type-only stub packages, never worth warming: @types/* (npm), types-* and *-stubs (pypi)."""
    if ecosystem == "npm":
        return key.startswith("@types/")
    if ecosystem == "pypi":
        return key.startswith("types-") or key.endswith("-stubs")
    return False


# Platform-specific binary packages: a native build of a tool for one OS and CPU, pulled in
# transitively (`@esbuild/linux-x64`, `@rollup/rollup-darwin-arm64`, `@next/swc-win32-x64-msvc`,
# `lightningcss-linux-x64-gnu`, `turbo-darwin-64`, crates `windows_x86_64_msvc`). Their docs
# are the tool's docs. Recognised by an OS token next to a CPU/ABI token, or by a scope that
# only holds such builds.
_OS_TOKENS = frozenset(
    "darwin macos osx linux linuxmusl win32 win64 windows android freebsd openbsd netbsd sunos "
    "solaris aix illumos openharmony dragonfly haiku cygwin mingw ios wasi emscripten".split())
_ARCH_TOKENS = frozenset(
    "x64 x86 x86_64 amd64 ia32 i386 i686 arm arm64 armv6 armv6l armv7 armv7l armhf aarch64 "
    "ppc ppc64 ppc64le s390x riscv64 loong64 loongarch64 mips mipsel mips64el sparc64 universal "
    "universal2 wasm32 wasm 32 64 gnu musl msvc gnueabihf musleabihf gnullvm eabi".split())
_BINARY_SCOPES = ("@esbuild/", "@img/sharp-", "@rollup/rollup-", "@next/swc-", "@swc/core-",
                  "@parcel/watcher-", "@tailwindcss/oxide-", "@biomejs/cli-", "@rspack/binding-",
                  "@nx/nx-", "@turbo/", "@oxlint/", "@unrs/resolver-binding-", "@sentry/cli-",
                  "@ast-grep/cli-", "@lancedb/lancedb-", "@napi-rs/", "@node-rs/", "@esbuild-kit/")


def _tokens(key: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    for ch in key:
        if ch in "-./@":
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    # crate names join with `_`: windows_x86_64_msvc -> windows, x86, 64, msvc and x86_64
    more = []
    for t in out:
        if "_" in t:
            parts = t.split("_")
            more.extend(parts)
            more.extend(a + "_" + b for a, b in zip(parts, parts[1:], strict=False))
    return out + more


def is_platform_binary(ecosystem: str, key: str) -> bool:
    """A native build for one platform (see the token lists above), never worth warming."""
    key = key.lower()
    if ecosystem == "npm" and key.startswith(_BINARY_SCOPES):
        if key.startswith(("@napi-rs/", "@node-rs/", "@img/sharp-", "@swc/core-", "@turbo/")):
            # scopes that also hold real packages: only their platform builds
            toks = set(_tokens(key))
            return bool(toks & _OS_TOKENS or toks & {"wasm32", "libvips", "wasm"})
        return True
    toks = set(_tokens(key))
    return bool(toks & _OS_TOKENS) and bool(toks & _ARCH_TOKENS)


def _locks(path: str | None) -> bool:
    return bool(path) and path.rsplit("/", 1)[-1] in LOCKFILES  # type: ignore[union-attr]


def warmable(ecosystem: str, key: str) -> bool:
    return not is_stub(ecosystem, key) and not is_platform_binary(ecosystem, key)


def default_top_n() -> int:
    return top_n()


def rank(deps: Iterable[Dep], top_n: int | None = None) -> list[RankedDep]:
    """Merge deps by (ecosystem, key) and order them: direct runtime, direct dev, transitive;
    ties by the number of files referencing the dep (more first), then by key.
    ``top_n=None`` takes ``MEMHOOKS_TOP_N`` from the environment (default 20)."""
    if top_n is None:
        top_n = default_top_n()
    merged: dict[tuple[str, str], list] = {}
    for d in deps:
        if not warmable(d.ecosystem, d.key):
            continue
        k = (d.ecosystem, d.key)
        order = KIND_ORDER.get(d.kind, 2)
        m = merged.get(k)
        if m is None:
            # [name, order, version, version_order, files, repository, version's file]
            merged[k] = [d.name, order, d.version, order if d.version else 9, {d.manifest}, None,
                         d.manifest if d.version else None]
            m = merged[k]
        m[4].add(d.manifest)
        if m[5] is None and d.spec and (repo := repo_of_url(d.spec)) is not None:
            m[5] = "/".join(repo)  # a git dependency: github:a/b, git+https://github.com/a/b.git
        if order < m[1]:
            m[0] = d.name
            m[1] = order
        if d.version and order < m[3]:
            m[2] = d.version
            m[3] = order
            m[6] = d.manifest
        if d.version and d.version == m[2] and _locks(d.manifest) and not _locks(m[6]):
            m[6] = d.manifest  # a manifest's dep carries its lockfile's version: name the lockfile
    kinds = {v: k for k, v in KIND_ORDER.items()}
    items = sorted(merged.items(), key=lambda kv: (kv[1][1], -len(kv[1][4]), kv[0][1], kv[0][0]))
    if top_n is not None:
        items = items[: max(top_n, 0)]
    return [RankedDep(m[0], key, eco, m[2], kinds[m[1]], len(m[4]), m[5], m[6])
            for (eco, key), m in items]


def candidates(deps: Iterable[Dep], top_n: int, *, backfill: int | None = None,
               direct_only: bool = False) -> list[RankedDep]:
    """The names a warm may ask about, in rank order: direct runtime deps, then direct dev
    deps (up to ``backfill`` of them, default 3 x N, so a name Context7 lacks can give its
    slot to the next); transitive deps only to fill a project with fewer direct deps than N
    (never more than the slots left), and none with ``direct_only``. Platform binaries,
    type stubs and the project's own workspace packages never appear (the scan drops those)."""
    top_n = max(0, int(top_n))
    backfill = max(top_n * 3, top_n) if backfill is None else max(backfill, top_n)
    ranked = rank(deps, top_n=10**9)
    direct = [r for r in ranked if r.kind != "transitive"]
    out = direct[:backfill]
    if not direct_only and len(direct) < top_n:
        out += [r for r in ranked if r.kind == "transitive"][: top_n - len(direct)]
    return out
