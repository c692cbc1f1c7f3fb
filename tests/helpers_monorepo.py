"""Write a synthetic npm + Python monorepo with about 2,000 distinct dependencies.

Used by tests/test_scan_rank.py and by benchmarks. No registry access: every name is
made up, every URL points at registry.invalid.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["write_monorepo"]


def _v(i: int) -> str:
    return f"{1 + i % 7}.{i % 13}.{i % 5}"


def write_monorepo(root: str | os.PathLike, n_deps: int = 2000, *, npm_packages: int = 20,
                   py_services: int = 10) -> dict:
    """Write the monorepo under ``root``; returns counts describing it.

    Half the deps are npm (``lib-0000``..), spread over ``npm_packages`` workspace packages
    with a root package-lock.json v3; half are PyPI (``py_lib_0000``..), spread over
    ``py_services`` uv workspace members with requirements files and a root uv.lock.
    ``shared-core`` (npm) and ``py-shared`` (pypi) are runtime deps of every member, and
    each package has a few dev deps, so ranking has ties to break.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    n_npm = n_deps // 2
    n_py = n_deps - n_npm
    npm_names = [f"lib-{i:04d}" if i % 10 else f"@scope{i % 7}/lib-{i:04d}" for i in range(n_npm)]
    py_names = [f"py_lib_{i:04d}" if i % 3 else f"Py.Lib-{i:04d}" for i in range(n_py)]
    files = 0

    def write(rel: str, text: str) -> None:
        nonlocal files
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        files += 1

    # ---------------------------------------------------------------- npm workspace
    per = max(1, (n_npm - 1) // npm_packages + 1)
    lock_packages: dict = {
        "": {"name": "mono", "version": "0.0.0", "workspaces": ["packages/*"],
             "devDependencies": {npm_names[0]: "^" + _v(0)}},
    }
    write("package.json", json.dumps({"name": "mono", "private": True, "workspaces": ["packages/*"],
                                      "devDependencies": {npm_names[0]: "^" + _v(0)}}, indent=2))
    for j in range(npm_packages):
        chunk = npm_names[j * per : (j + 1) * per]
        if not chunk:
            break
        deps = {n: "^" + _v(i) for i, n in enumerate(chunk[: len(chunk) * 4 // 5])}
        deps["shared-core"] = "^2.0.0"
        dev = {n: "~" + _v(i) for i, n in enumerate(chunk[len(chunk) * 4 // 5 :])}
        dev["@types/node"] = "^22.0.0"
        manifest = {"name": f"@mono/pkg-{j:02d}", "version": "1.0.0", "dependencies": deps,
                    "devDependencies": dev}
        write(f"packages/pkg-{j:02d}/package.json", json.dumps(manifest, indent=2))
        lock_packages[f"packages/pkg-{j:02d}"] = manifest
        # source tree noise the scan walks past
        write(f"packages/pkg-{j:02d}/src/components/index.ts", "export {}\n")
        lock_packages[f"node_modules/@mono/pkg-{j:02d}"] = {"resolved": f"packages/pkg-{j:02d}", "link": True}
    for i, n in enumerate(npm_names + ["shared-core", "@types/node"]):
        lock_packages[f"node_modules/{n}"] = {
            "version": _v(i), "resolved": f"https://registry.invalid/{n}/-/{n.rsplit('/', 1)[-1]}-{_v(i)}.tgz",
            "integrity": "sha512-" + "A" * 86 + "==", "license": "MIT",
        }
    write("package-lock.json", json.dumps({"name": "mono", "lockfileVersion": 3, "requires": True,
                                           "packages": lock_packages}, indent=2))
    # skipped directories with manifests that must not be read
    write("node_modules/lib-0001/package.json", json.dumps({"name": "lib-0001", "dependencies": {"evil": "1"}}))
    write(".git/package.json", "{}")
    write("dist/package.json", json.dumps({"dependencies": {"evil-dist": "1"}}))

    # ---------------------------------------------------------------- python (uv workspace)
    write("pyproject.toml", '[project]\nname = "mono-py"\nversion = "0"\ndependencies = []\n\n'
                            '[tool.uv.workspace]\nmembers = ["services/*"]\n')
    per_py = max(1, (n_py - 1) // py_services + 1)
    uv = ['version = 1', 'revision = 2', 'requires-python = ">=3.11"', "",
          "[manifest]", "members = [" + ", ".join(f'"svc-{s:02d}"' for s in range(py_services)) + "]", ""]
    for s in range(py_services):
        chunk = py_names[s * per_py : (s + 1) * per_py]
        if not chunk:
            break
        runtime, devs = chunk[: len(chunk) * 4 // 5], chunk[len(chunk) * 4 // 5 :]
        half = len(runtime) // 2
        write(f"services/svc-{s:02d}/pyproject.toml",
              f'[project]\nname = "svc-{s:02d}"\nversion = "0.1.0"\ndependencies = [\n'
              + "".join(f'    "{n}>={_v(i)}",\n' for i, n in enumerate(runtime[:half]))
              + '    "py-shared>=1",\n]\n\n[dependency-groups]\ndev = [\n'
              + "".join(f'    "{n}",\n' for n in devs) + '    "types-requests",\n]\n')
        write(f"services/svc-{s:02d}/requirements.txt",
              "# pinned runtime deps\n" + "".join(f"{n}=={_v(i)}\n" for i, n in enumerate(runtime[half:])))
        write(f"services/svc-{s:02d}/svc/__init__.py", "")
        uv += ["[[package]]", f'name = "svc-{s:02d}"', 'version = "0.1.0"', 'source = { editable = "services/svc-%02d" }' % s,
               "dependencies = ["] + [f'    {{ name = "{n.lower().replace("_", "-").replace(".", "-")}" }},' for n in runtime[:half]] + [
               '    { name = "py-shared" },', "]", "", "[package.dev-dependencies]", "dev = ["] + [
               f'    {{ name = "{n.lower().replace("_", "-").replace(".", "-")}" }},' for n in devs] + ["]", ""]
    for i, n in enumerate(py_names + ["py-shared", "types-requests"]):
        norm = n.lower().replace("_", "-").replace(".", "-")
        uv += ["[[package]]", f'name = "{norm}"', f'version = "{_v(i)}"',
               'source = { registry = "https://registry.invalid/simple" }',
               f'sdist = {{ url = "https://registry.invalid/files/{norm}-{_v(i)}.tar.gz", hash = "sha256:{"0" * 64}", size = 12345 }}',
               "wheels = [",
               f'    {{ url = "https://registry.invalid/files/{norm}-{_v(i)}-py3-none-any.whl", hash = "sha256:{"1" * 64}", size = 2345 }},',
               "]", ""]
    write("uv.lock", "\n".join(uv))
    write(".venv/lib/python3.11/site-packages/x/pyproject.toml", '[project]\nname="evil-venv"\ndependencies=["evil"]\n')
    return {"npm": n_npm, "pypi": n_py, "deps": n_deps, "files_written": files,
            "npm_packages": npm_packages, "py_services": py_services}
