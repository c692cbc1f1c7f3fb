"""The README's set-up line, timed as a new user meets it: a fresh copy of the checkout, a fresh
HOME, a fresh environment, for each installer (pip in a venv, `uv tool`, `pipx`) and Python.

Usage: python benchmarks/readme_flow.py [--python 3.11=/path/python3.11 ...] [--installer pip,uv,pipx]
       [--warm] [--json FILE]

Each row runs the README's line with that installer, e.g. for uv
`uv tool install --python PY . && memhooks install --allow && memhooks import-transcripts &&
memhooks warm`, with the Context7 API unreachable (an offline machine: warm must still exit 0),
then runs the PostToolUse command `memhooks install` wrote on a payload and checks the journal.
Package caches are the machine's own (pip's, uv's): `--warm` runs each row once untimed first,
so that the figure is the set-up itself, not the first download. Times are wall-clock seconds
of one run (a set-up is not a hot path: no ratio to `python -c pass`).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAIL = "memhooks install --allow && memhooks import-transcripts && memhooks warm"


def checkout_copy(dest: str) -> str:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel))
    return dest


def tool(name: str) -> str | None:
    """uv / pipx: on PATH, or beside this python (`pip install uv pipx` puts them there)."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    return here if os.path.exists(here) else shutil.which(name)


def line(installer: str, python: str) -> str:
    if installer == "pip":
        return f'"{python}" -m venv .venv && . .venv/bin/activate && pip install . && {TAIL}'
    if installer == "uv":
        return f'"{tool("uv")}" tool install --python "{python}" . && {TAIL}'
    return f'"{tool("pipx")}" install --python "{python}" . && {TAIL}'


def one(installer: str, version: str, python: str) -> dict:
    tmp = tempfile.mkdtemp(prefix=f"memhooks-readme-{installer}-{version}-")
    try:
        home = os.path.join(tmp, "home")
        bindir = os.path.join(home, ".local", "bin")
        os.makedirs(bindir)
        checkout = checkout_copy(os.path.join(tmp, "memhooks"))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CLAUDE_", "MEMHOOKS_", "CONTEXT7_", "VIRTUAL_ENV", "PYTHON", "UV_", "PIPX_"))}
        env.update(HOME=home, CONTEXT7_API_URL="http://127.0.0.1:9/api", UV_TOOL_BIN_DIR=bindir,
                   UV_TOOL_DIR=os.path.join(home, "uv-tools"), PIPX_HOME=os.path.join(home, "pipx"),
                   PIPX_BIN_DIR=bindir, PATH=bindir + os.pathsep + "/usr/local/bin:/usr/bin:/bin")
        for cache in ("UV_CACHE_DIR", "PIP_CACHE_DIR"):  # the machine's caches, not the fresh HOME's
            env[cache] = os.environ.get(cache) or os.path.expanduser(
                "~/.cache/uv" if cache == "UV_CACHE_DIR" else "~/.cache/pip")
        command = line(installer, python)
        start = time.perf_counter()
        proc = subprocess.run(["bash", "-c", command], cwd=checkout, env=env, capture_output=True, text=True,
                              timeout=1800)
        total = time.perf_counter() - start
        captured = False
        if proc.returncode == 0:
            settings = json.load(open(os.path.join(home, ".claude", "settings.json")))
            (cmd,) = [h["command"] for g in settings["hooks"]["PostToolUse"] for h in g["hooks"]]
            payload = {"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "WebFetch",
                       "tool_use_id": "toolu_readme", "cwd": tmp, "tool_input": {"url": "https://example.org/x"},
                       "tool_response": {"code": 200, "url": "https://example.org/x", "result": "flux capacitor"}}
            subprocess.run(["sh", "-c", cmd], input=json.dumps(payload), text=True, env=env, timeout=60)
            journal = os.path.join(home, ".local", "share", "memhooks", "journal.db")
            with sqlite3.connect(journal) as conn:
                captured = conn.execute("SELECT count(*) FROM events WHERE payload LIKE '%toolu_readme%'"
                                        ).fetchone()[0] == 1
        v = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                           capture_output=True, text=True).stdout.strip()
        return {"installer": installer, "python": v, "seconds": round(total, 1), "rc": proc.returncode,
                "hook_captures": captured, "tail": (proc.stdout + proc.stderr)[-400:] if proc.returncode else ""}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", action="append", default=[], help="VERSION=PATH (default: pyenv's 3.11-3.13)")
    ap.add_argument("--installer", default="pip,uv,pipx")
    ap.add_argument("--warm", action="store_true", help="run each row once untimed first (fills the caches)")
    ap.add_argument("--json")
    args = ap.parse_args()
    pythons = dict(p.split("=", 1) for p in args.python)
    if not pythons:
        for v in ("3.11", "3.12", "3.13"):
            found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{v}.*/bin/python{v}")))
            if found:
                pythons[v] = found[-1]
    rows = []
    for installer in args.installer.split(","):
        if installer != "pip" and not tool(installer):
            print(f"{installer}: not installed (pip install {installer}); skipped", flush=True)
            continue
        for version, python in pythons.items():
            if args.warm:
                one(installer, version, python)
            row = one(installer, version, python)
            rows.append(row)
            print(f"| {row['installer']} | {row['python']} | {row['seconds']} s | rc {row['rc']} | "
                  f"hook captures: {row['hook_captures']} |{(' ' + row['tail']) if row['tail'] else ''}",
                  flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
