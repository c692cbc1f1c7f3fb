"""scan_project, fingerprint and rank on real fixture trees and generated ones."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers_monorepo import write_monorepo
from memhooks.warm.context import fingerprint
from memhooks.warm.lockfiles import Dep, make_dep
from memhooks.warm.rank import RankedDep, default_top_n, is_stub, rank
from memhooks.warm.scan import SKIP_DIRS, ScanResult, scan_project

FIX = Path(__file__).parent / "fixtures" / "lockfiles"


def kinds(res: ScanResult) -> dict[str, tuple]:
    """Merged (kind, version) per key, as rank sees them."""
    return {r.key: (r.kind, r.version) for r in rank(res.deps, top_n=10_000)}


def write(root: Path, rel: str, text: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def pkg(deps=None, dev=None, **extra) -> str:
    return json.dumps({"dependencies": deps or {}, "devDependencies": dev or {}, **extra})


# ------------------------------------------------------------------ fixture trees

@pytest.mark.parametrize("d,lock", [("pnpm9", "pnpm-lock.yaml"), ("pnpm8", "pnpm-lock.yaml"),
                                    ("berry", "yarn.lock"), ("bun", "bun.lock"),
                                    ("npm-workspace", "package-lock.json")])
def test_js_workspaces(d, lock):
    res = scan_project(FIX / d)
    assert res.errors == []
    assert res.members == ["packages/utils", "packages/web"]
    assert {"package.json", lock, "packages/web/package.json", "packages/utils/package.json"} <= set(res.files)
    k = kinds(res)
    assert "@mono/utils" not in k and "@mono/web" not in k and "mono" not in k
    assert k["react"] == ("runtime", "18.3.1")
    assert k["zod"] == ("runtime", "3.25.76")
    assert k["vitest"] == ("dev", "2.1.9")  # berry's lock merges dev deps; package.json decides
    assert k["typescript"] == ("dev", "5.6.3")
    assert k["loose-envify"][0] == "transitive"
    top = rank(res.deps, top_n=6)
    assert [r.kind for r in top] == ["runtime"] * 4 + ["dev"] * 2
    assert "@types/lodash" not in {r.key for r in rank(res.deps, top_n=1000)}


def test_cargo_workspace_kinds_from_manifests():
    res = scan_project(FIX / "cargo")
    assert res.errors == [] and sorted(res.members) == ["crates/api", "crates/core", "tools/xtask"]
    k = kinds(res)
    assert not {"app-api", "app-core", "xtask"} & set(k)
    assert k["proptest"] == ("dev", "1.5.0")  # Cargo.lock says direct, Cargo.toml says dev
    assert k["prost-build"] == ("dev", "0.13.3")
    assert k["serde-json"] == ("runtime", "1.0.128")
    assert k["tokio"] == ("runtime", "1.40.0")
    assert k["serde-derive"][0] == "transitive"
    top = rank(res.deps, top_n=3)
    assert [r.key for r in top] == ["serde", "anyhow", "serde-json"]  # 4, 3, 3 (then by key) files
    assert top[0].manifests == 4


def test_cargo_workspace_exclude(tmp_path):
    shutil.copytree(FIX / "cargo", tmp_path / "ws")
    write(tmp_path, "ws/crates/experimental/Cargo.toml", '[package]\nname="exp"\n[dependencies]\nrand="0.8"\n')
    res = scan_project(tmp_path / "ws", max_depth=0)  # only the root and the members
    assert "crates/experimental" not in res.members
    assert "rand" not in kinds(res)
    assert kinds(res)["proptest"][0] == "dev"


@pytest.mark.parametrize("d,expect", [
    ("uv", {"fastapi": "runtime", "pytest": "dev", "ruff": "dev", "anyio": "transitive"}),
    ("poetry", {"fastapi": "runtime", "pytest": "dev", "starlette": "transitive"}),
    ("pipenv", {"django": "runtime", "celery": "runtime", "black": "dev", "pytest-django": "dev", "click": "transitive"}),
    ("ruby", {"rails": "runtime", "capybara": "dev", "rspec-rails": "dev", "actionpack": "transitive"}),
    ("go", {"github.com/gin-gonic/gin": "runtime", "golang.org/x/crypto": "transitive"}),
    ("php", {"laravel/framework": "runtime", "phpunit/phpunit": "dev", "symfony/console": "transitive"}),
])
def test_single_project_kinds(d, expect):
    res = scan_project(FIX / d)
    assert res.errors == []
    k = kinds(res)
    for name, kind in expect.items():
        assert k[name][0] == kind, name
        assert k[name][1], f"{name} has a locked version"


def test_requirements_tree_with_cycle():
    res = scan_project(FIX / "requirements")
    assert res.errors == []
    assert set(res.files) == {"requirements.txt", "requirements-dev.txt", "constraints.txt", "requirements/test.txt"}
    k = kinds(res)
    assert k["foo-bar-baz"] == ("runtime", None)
    assert k["pydantic"] == ("runtime", "2.9.2")
    assert k["pytest"][0] == "dev" and k["ruff"] == ("dev", "0.6.9")


# ------------------------------------------------------------------ walking rules

def test_skip_dirs_and_hidden(tmp_path):
    write(tmp_path, "package.json", pkg({"good": "1.0.0"}))
    for d in sorted(SKIP_DIRS) + [".hidden", ".cache", "venv", "target", "vendor"]:
        write(tmp_path, f"{d}/package.json", pkg({f"evil-{d.strip('.')}": "1"}))
        write(tmp_path, f"src/{d}/requirements.txt", f"evil-nested-{d.strip('.')}\n")
    res = scan_project(tmp_path)
    assert [d.key for d in res.deps] == ["good"]
    assert res.files == ["package.json"]
    assert not any(part in SKIP_DIRS or part.startswith(".") for d in res.dirs for part in d.split("/") if d != ".")


def test_depth_bound(tmp_path):
    rel = ""
    for i in range(7):
        write(tmp_path, f"{rel}requirements.txt", f"level{i}\n")
        rel += f"d{i}/"
    got = {d.key for d in scan_project(tmp_path, max_depth=2).deps}
    assert got == {"level0", "level1", "level2"}
    assert {d.key for d in scan_project(tmp_path, max_depth=0).deps} == {"level0"}
    assert len(scan_project(tmp_path, max_depth=10).deps) == 7


def test_file_bound(tmp_path):
    for i in range(10):
        write(tmp_path, f"p{i:02d}/package.json", pkg({f"dep{i}": "1"}))
    res = scan_project(tmp_path, max_files=3)
    assert len(res.files) == 3 and res.truncated
    assert {d.key for d in res.deps} == {"dep0", "dep1", "dep2"}  # sorted, breadth-first
    full = scan_project(tmp_path)
    assert len(full.files) == 10 and not full.truncated


def test_dir_bound(tmp_path):
    for i in range(30):
        (tmp_path / f"d{i:02d}").mkdir()
    res = scan_project(tmp_path, max_dirs=5)
    assert len(res.dirs) == 5 and res.truncated


def test_workspace_members_found_past_depth_and_negations(tmp_path):
    write(tmp_path, "package.json", pkg(workspaces={"packages": ["apps/**", "!apps/legacy"]}, name="root"))
    write(tmp_path, "apps/a/b/c/d/package.json", pkg({"deep-dep": "^1"}, name="@x/deep"))
    write(tmp_path, "apps/web/package.json", pkg({"@x/deep": "*", "web-dep": "^1"}, name="@x/web"))
    write(tmp_path, "apps/legacy/package.json", pkg({"legacy-dep": "^1"}))
    write(tmp_path, "apps/node_modules/x/package.json", pkg({"evil": "1"}))
    res = scan_project(tmp_path, max_depth=1)
    k = kinds(res)
    assert "deep-dep" in k and "web-dep" in k
    assert "legacy-dep" not in k and "evil" not in k
    assert "@x/deep" not in k  # a workspace package, not a dependency
    assert "apps/a/b/c/d" in res.members


def test_pnpm_workspace_yaml_and_uv_and_go_work(tmp_path):
    write(tmp_path, "pnpm-workspace.yaml", "packages:\n  - 'libs/*'\n  - '!libs/skip'\n")
    write(tmp_path, "libs/one/package.json", pkg({"one-dep": "1.0.0"}))
    write(tmp_path, "libs/skip/package.json", pkg({"skip-dep": "1.0.0"}))
    write(tmp_path, "pyproject.toml", '[project]\nname="root"\n[tool.uv.workspace]\nmembers=["py/*"]\nexclude=["py/old"]\n')
    write(tmp_path, "py/svc/pyproject.toml", '[project]\nname="svc"\ndependencies=["Flask>=3", "root"]\n')
    write(tmp_path, "py/old/pyproject.toml", '[project]\nname="old"\ndependencies=["old-dep"]\n')
    write(tmp_path, "go.work", "go 1.22\nuse ./gosvc\n")
    write(tmp_path, "gosvc/go.mod", "module example.com/gosvc\nrequire github.com/labstack/echo/v4 v4.12.0\n")
    res = scan_project(tmp_path, max_depth=0)
    k = kinds(res)
    assert k["one-dep"] == ("runtime", "1.0.0")
    assert "skip-dep" not in k and "old-dep" not in k and "root" not in k
    assert k["flask"] == ("runtime", None)
    assert k["github.com/labstack/echo/v4"] == ("runtime", "v4.12.0")
    assert sorted(res.members) == ["gosvc", "libs/one", "py/svc"]


def test_members_cannot_escape_root(tmp_path):
    write(tmp_path, "outside/package.json", pkg({"outside-dep": "1"}))
    write(tmp_path, "root/package.json", pkg(workspaces=["../outside", "/etc", "../*"]))
    res = scan_project(tmp_path / "root")
    assert res.members == [] and "outside-dep" not in kinds(res)
    write(tmp_path, "root/requirements.txt", "-r ../outside/requirements.txt\nok\n")
    write(tmp_path, "outside/requirements.txt", "outside-req\n")
    assert set(kinds(scan_project(tmp_path / "root"))) == {"ok"}


# ------------------------------------------------------------------ malformed input

MALFORMED = {
    "package.json": '{"dependencies": {"a": "1"',
    "package-lock.json": '{"lockfileVersion": 3, "packages": {"": {',
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies: {react: [\n",
    "yarn.lock": "__metadata:\n  version: 8\n\"react@npm:^18\":\n  version: 'x\n",
    "bun.lock": '{"lockfileVersion": 1, "workspaces": {',
    "pyproject.toml": '[project]\nname = "x"\ndependencies = ["a",\n',
    "poetry.lock": "[[package]]\nname = \"x\nversion",
    "uv.lock": "version = 1\n[[package]\nname=",
    "Pipfile": "[packages]\nrequests = \n",
    "Pipfile.lock": "{\"default\": ",
    "Cargo.toml": "[dependencies\nserde = 1",
    "Cargo.lock": "[[package]]\nname = ",
    "go.mod": "module x\nrequire (\n\tgarbage here\n)\nbogus directive\n",
    "go.sum": "not a go sum line\n",
    "Gemfile.lock": "GEM\n  remote: x\n  specs:\n    (((\n",
    "composer.json": "[1, 2",
    "composer.lock": "{",
    "pnpm-workspace.yaml": "packages: [\n",
}


def test_malformed_files_are_recorded_not_raised(tmp_path):
    for i, (name, text) in enumerate(MALFORMED.items()):
        write(tmp_path, f"bad{i:02d}/{name}", text)
        write(tmp_path, f"junk{i:02d}/{name}", os.urandom(64) + b"\xff\xfe\x00")
    write(tmp_path, "ok/package.json", pkg({"fine": "1.0.0"}))
    write(tmp_path, "big/package.json", pkg({"x" * 100: "1"}))
    res = scan_project(tmp_path, max_bytes=80, max_files=500)
    assert [d.key for d in res.deps] == ["fine"]
    assert len(res.errors) >= len(MALFORMED) * 2 - 2  # a few junk texts may parse as empty
    assert any("big/package.json" in e and "larger" in e for e in res.errors)
    assert any("not UTF-8" in e for e in res.errors)
    for name in ("package.json", "pyproject.toml", "Cargo.toml", "pnpm-lock.yaml", "composer.json"):
        i = list(MALFORMED).index(name)
        assert any(e.startswith(f"bad{i:02d}/{name}:") for e in res.errors), name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(MALFORMED) + ["Gemfile", "requirements.txt", "go.work"]),
       data=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def test_scan_never_raises_on_any_content(tmp_path, name, data):
    d = tmp_path / "p"
    shutil.rmtree(d, ignore_errors=True)
    write(d, name, data)
    res = scan_project(d)
    assert isinstance(res, ScanResult)
    assert all(isinstance(x, Dep) for x in res.deps)


def test_missing_root_and_unreadable(tmp_path):
    res = scan_project(tmp_path / "nope")
    assert res.deps == [] and res.errors
    write(tmp_path, "requirements.txt", "a\n")
    os.symlink(tmp_path / "missing-target", tmp_path / "package.json")  # dangling: not a file
    assert [d.key for d in scan_project(tmp_path).deps] == ["a"]


# ------------------------------------------------------------------ fingerprint

def test_fingerprint_changes_with_files_and_dirs(tmp_path):
    write(tmp_path, "package.json", pkg({"a": "1"}))
    write(tmp_path, "sub/requirements.txt", "b\n")
    res = scan_project(tmp_path)
    fp = fingerprint(tmp_path, res.files, res.dirs)
    assert fp == fingerprint(tmp_path, list(reversed(res.files)), res.dirs) and fp
    p = tmp_path / "package.json"
    st_ = p.stat()
    os.utime(p, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000_000))
    fp2 = fingerprint(tmp_path, res.files, res.dirs)
    assert fp2 != fp
    d = tmp_path / "sub"
    write(tmp_path, "sub/pyproject.toml", "[project]\nname='x'\n")
    os.utime(d, ns=(d.stat().st_atime_ns, d.stat().st_mtime_ns + 1_000_000_000))
    assert fingerprint(tmp_path, res.files, res.dirs) != fp2  # a new manifest in a visited dir
    (tmp_path / "sub/requirements.txt").unlink()
    assert fingerprint(tmp_path, res.files, res.dirs) != fp2


# ------------------------------------------------------------------ rank

def D(name, kind="runtime", version=None, manifest="package.json", eco="npm"):
    return make_dep(name, eco, version, kind, manifest)


def test_rank_order_and_ties():
    deps = [
        D("zeta", "transitive", "1.0.0", "package-lock.json"),
        D("alpha", "dev"),
        D("beta"), D("beta", manifest="a/package.json"),
        D("gamma"),
        D("delta", "transitive"), D("delta", "dev", manifest="b/package.json"),
        D("epsilon", "transitive", manifest="x"), D("epsilon", "transitive", manifest="y"),
    ]
    got = [(r.key, r.kind, r.manifests) for r in rank(deps)]
    assert got == [
        ("beta", "runtime", 2), ("gamma", "runtime", 1),
        ("delta", "dev", 2), ("alpha", "dev", 1),
        ("epsilon", "transitive", 2), ("zeta", "transitive", 1),
    ]


def test_rank_merge_kind_version_and_ecosystems():
    deps = [
        D("React", "runtime", None, "package.json"),
        D("react", "transitive", "18.3.1", "package-lock.json"),
        D("react", "transitive", "17.0.2", "old/package-lock.json"),
        D("react", "runtime", None, "pkg", eco="pypi"),
    ]
    out = rank(deps)
    assert out[0] == RankedDep("React", "react", "npm", "18.3.1", "runtime", 3)
    assert out[1] == RankedDep("react", "react", "pypi", None, "runtime", 1)
    # a version seen with the better kind wins
    out = rank([D("a", "transitive", "1.0.0", "x"), D("a", "dev", "2.0.0", "y")])
    assert (out[0].kind, out[0].version) == ("dev", "2.0.0")


def test_rank_skips_type_stubs():
    deps = [D("@Types/Node", "dev"), D("@types/react"), D("typescript", "dev"),
            D("types-requests", eco="pypi"), D("Django-Stubs", eco="pypi"), D("typeshed-client", eco="pypi"),
            D("types-x", eco="crates")]
    assert make_dep("@Types/Node", "npm", None, "dev", "p").key == "@types/node"
    assert [r.key for r in rank(deps)] == ["types-x", "typeshed-client", "typescript"]
    assert is_stub("npm", "@types/node") and is_stub("pypi", "django-stubs") and not is_stub("npm", "types-x")


def test_rank_top_n_and_env(monkeypatch):
    deps = [D(f"p{i:03d}") for i in range(50)]
    monkeypatch.delenv("MEMHOOKS_TOP_N", raising=False)
    assert len(rank(deps)) == 20 and default_top_n() == 20
    assert [r.key for r in rank(deps, top_n=3)] == ["p000", "p001", "p002"]
    assert rank(deps, top_n=0) == []
    monkeypatch.setenv("MEMHOOKS_TOP_N", "7")
    assert len(rank(deps)) == 7 and len(rank(deps, top_n=30)) == 30
    monkeypatch.setenv("MEMHOOKS_TOP_N", "lots")
    assert len(rank(deps)) == 20


def test_pep503_names_merge_across_files(tmp_path):
    write(tmp_path, "requirements.txt", "Foo_Bar.baz==1.0\n")
    write(tmp_path, "sub/pyproject.toml", '[project]\nname="s"\ndependencies=["foo-bar-BAZ>=1"]\n')
    [r] = rank(scan_project(tmp_path).deps)
    assert (r.key, r.version, r.manifests) == ("foo-bar-baz", "1.0", 2)


# ------------------------------------------------------------------ acceptance projects
# Small projects locked by the real tools (make_lockfiles.sh); each exposed a scan bug.

ACCEPT = {
    # yarn classic locks ms 2.0.0 (for debug@2) and ms@^2.1.3 (the root's): the root's is direct
    "yarn1-workspace": [("debug", "2.6.9", "runtime", 2), ("lodash", "4.18.1", "runtime", 2),
                        ("ms", "2.1.3", "runtime", 2), ("is-number", "7.0.0", "dev", 2)],
    # bun keys @bs/b's own ms by the member's name; "npm:lodash@4" is a range, not version "4"
    "bun-scoped": [("ms", "2.1.3", "runtime", 3), ("debug", "2.6.9", "runtime", 2),
                   ("lodash", "4.18.1", "runtime", 2), ("is-number", "7.0.0", "dev", 2)],
    "pnpm10": [("react", "18.3.1", "runtime", 3), ("lodash", "4.18.1", "runtime", 2),
               ("ms", "2.1.3", "runtime", 2), ("react-dom", "18.3.1", "runtime", 2),
               ("is-number", "7.0.0", "dev", 2), ("js-tokens", "4.0.0", "transitive", 1),
               ("loose-envify", "1.4.0", "transitive", 1), ("scheduler", "0.23.2", "transitive", 1)],
    # requirements.txt is also read (sooner) as requirements-dev.in's -c include: it is still
    # parsed on its own; "# via" makes pytest's own deps transitive
    "uv-compile": [("pytest", "9.2.0", "runtime", 3), ("idna", "3.20", "runtime", 2),
                   ("pytest-timeout", "2.4.0", "dev", 2), ("iniconfig", "2.3.1", "transitive", 2),
                   ("packaging", "26.4", "transitive", 2), ("pluggy", "1.7.0", "transitive", 2),
                   ("pygments", "2.21.0", "transitive", 2)],
    # tomli; python_version < '3.11' under requires-python >= 3.11: uv locks no tomli, nor do we
    "uv-workspace": [("idna", "3.20", "runtime", 2), ("sniffio", "1.3.1", "runtime", 2),
                     ("iniconfig", "2.3.1", "dev", 2)],
}


@pytest.mark.parametrize("d", sorted(ACCEPT))
def test_acceptance_projects(d):
    res = scan_project(FIX / d)
    assert res.errors == []
    got = [(r.name, r.version, r.kind, r.manifests) for r in rank(res.deps, top_n=1000)]
    assert got == ACCEPT[d]
    again = scan_project(FIX / d)
    assert [(x.name, x.version, x.kind) for x in rank(again.deps, top_n=1000)] == [g[:3] for g in got]


def test_included_requirements_file_is_still_parsed_on_its_own(tmp_path):
    write(tmp_path, "a-requirements.txt", "-r requirements.txt\n-c missing.txt\n")
    write(tmp_path, "requirements.txt", "flask==3.0.0\n")
    res = scan_project(tmp_path)
    assert res.files == ["a-requirements.txt", "requirements.txt"]  # the missing include isn't listed
    assert res.errors == ["missing.txt: included but not found"]
    assert kinds(res) == {"flask": ("runtime", "3.0.0")}
    assert {d.manifest for d in res.deps} == {"requirements.txt"}


def test_locked_version_beats_the_manifest_guess(tmp_path):
    write(tmp_path, "package.json", pkg({"my-lodash": "npm:lodash@4", "ms": "2.1.3"}))
    write(tmp_path, "yarn.lock", '# yarn lockfile v1\n\n"my-lodash@npm:lodash@4":\n  version "4.17.21"\n\n'
          'ms@2.1.3:\n  version "2.1.3"\n\nms@2.0.0:\n  version "2.0.0"\n')
    assert kinds(scan_project(tmp_path)) == {"lodash": ("runtime", "4.17.21"), "ms": ("runtime", "2.1.3")}


@pytest.mark.parametrize("d,lock", [("yarn1-workspace", "yarn.lock"), ("bun-scoped", "bun.lock"),
                                    ("pnpm10", "pnpm-lock.yaml"), ("uv-workspace", "uv.lock"),
                                    ("poetry", "poetry.lock"), ("berry", "yarn.lock"),
                                    ("npm-workspace", "package-lock.json")])
def test_truncated_lockfile_is_skipped_with_an_error(tmp_path, d, lock):
    shutil.copytree(FIX / d, tmp_path / d)
    text = (FIX / d / lock).read_text()
    (tmp_path / d / lock).write_text(text[: len(text) * 6 // 10])
    res = scan_project(tmp_path / d)
    assert len(res.errors) == 1 and res.errors[0].startswith(f"{lock}: ")
    full = {r.key: r.kind for r in rank(scan_project(FIX / d).deps, top_n=1000) if r.kind != "transitive"}
    assert {r.key: r.kind for r in rank(res.deps, top_n=1000)} == full  # the manifests still count


# ------------------------------------------------------------------ the 2,000-dep monorepo

def test_monorepo_2000_deps(tmp_path):
    info = write_monorepo(tmp_path / "mono")
    t0 = time.perf_counter()
    res = scan_project(tmp_path / "mono")
    top = rank(res.deps)
    elapsed = time.perf_counter() - t0
    assert res.errors == [] and not res.truncated
    keys = {(d.ecosystem, d.key) for d in res.deps}
    assert len(keys) == info["deps"] + 4  # + shared-core, py-shared, @types/node, types-requests
    assert not any("evil" in k for _, k in keys)
    assert len(res.members) == info["npm_packages"] + info["py_services"]
    assert [(r.key, r.kind) for r in top[:2]] == [("shared-core", "runtime"), ("py-shared", "runtime")]
    assert top[0].manifests == info["npm_packages"] + 1 and top[0].version
    assert len(top) == 20 and all(r.kind == "runtime" for r in top)
    everything = rank(res.deps, top_n=100_000)
    assert len(everything) == info["deps"] + 2  # stubs dropped
    assert sum(r.kind == "dev" for r in everything) > 300
    # (how long it takes is benchmarks/' business, not a test's: printed for the record)
    print(f"\nscan+rank of {info['deps']} deps: {elapsed * 1000:.1f} ms ({len(res.files)} files, {len(res.dirs)} dirs)")
