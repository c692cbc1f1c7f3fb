"""Every hot path as a user meets it, as ratios to `python -c pass` and `python -I -S -c pass`.

Rows:
  1. `bin/lc-cache-lookup react` (the command additionalContext names), launcher present
  2. the same shim before any launcher exists, `python3` on PATH being a shell shim
     (pyenv's when there is one, else a stand-in that execs this python, as pyenv does),
     and the calls after that first one (which recorded the interpreter in hot.python)
  3. `lc-cache-lookup react`, the console script next to this python (skipped when absent)
  4. `python -I -S …/_entry.py lc-cache-lookup react` (what both should cost)
  5. `hooks/session-start`, lockfiles unchanged
  6. `hooks/post-tool-use`, a 50 KB query-docs payload (journal + detached ingester spawn);
     `hooks/pre-tool-use` and `hooks/post-tool-use` on an unrelated Bash command (`ls`: every
     Bash call reaches them for the ctx7 CLI; a byte check lets it go)
     (5 and 6 again as Claude Code runs them: hooks.json's command through `sh -c`, and
     the commands `memhooks install` writes, which run its launcher, through `sh -c`)
  7. yellow-research's own `lc-cache-lookup react` (`--yr PATH` to its checkout)
  8. `memhooks mcp`, spawn to the `initialize` answer, through the real `mcp` client

Usage: python benchmarks/hotpaths.py [--rounds N] [--yr PATH] [--json FILE] [--only TEXT] [--skip-mcp]
All rows alternate with both baselines in one loop (see _timing.py); medians of >= 20 rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
from _timing import PYTHON, compare, floor_line, run_once, wait_ingester
from capture import payload as query_docs_payload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENTRY = os.path.join(ROOT, "src", "memhooks", "_entry.py")


def _shell_python3(tmp: str) -> str:
    """A folder whose python3 is a shell shim, as a pyenv user has on PATH."""
    d = os.path.join(tmp, "shimbin")
    os.makedirs(d, exist_ok=True)
    pyenv = os.path.expanduser("~/.pyenv/shims/python3")
    if not os.path.exists(pyenv):
        pyenv = shutil.which("python3") or ""
    target = os.path.join(d, "python3")
    if pyenv and _is_shell_script(pyenv):
        os.symlink(pyenv, target)
    else:
        with open(target, "w") as fh:
            fh.write(f'#!/usr/bin/env bash\nexec "{PYTHON}" "$@"\n')
        os.chmod(target, 0o755)
    return d


def _is_shell_script(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"#!" and b"python" not in fh.readline()
    except OSError:
        return False


def _wait_for_plugin_venv(data: str, start: bytes, env: dict, limit_s: float = 600) -> None:
    """A first SessionStart in plugin mode builds the plugin's venv in the background (a pip
    install that keeps a core busy for a minute or more): time nothing until it is done,
    then run SessionStart once more so that it records the venv's python."""
    building = os.path.join(data, "notice-building")
    deadline = time.monotonic() + limit_s
    while os.path.exists(building) and time.monotonic() < deadline:
        time.sleep(1)
    subprocess.run([os.path.join(ROOT, "hooks", "session-start")], input=start, env=env,
                   capture_output=True, timeout=60)


def mcp_initialize_ms(env: dict, rounds: int) -> dict:
    """Spawn `memhooks mcp` through the real client and time until `initialize` returns."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=os.path.join(ROOT, "bin", "memhooks-mcp"), args=[], env=env)

    async def one() -> float:
        start = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            elapsed = time.perf_counter() - start
        return elapsed

    times = [anyio.run(one) for _ in range(max(rounds, 20))]
    result = {"label": "memhooks mcp: spawn to initialize (real mcp client)",
              "median_ms": round(statistics.median(times) * 1000, 1),
              "p95_ms": round(sorted(times)[int(len(times) * 0.95) - 1] * 1000, 1), "rounds": len(times)}
    print(f"{result['label']}: median {result['median_ms']} ms, p95 {result['p95_ms']} ms", flush=True)
    return result


def head_to_head(ours, ours_env, theirs, their_env, rounds: int) -> dict:
    """Both lookups (each a hit in its own cache) alternated in one loop: how many times
    faster ours is, as the ratio of the medians."""

    a, b = [], []
    for _ in range(3):
        run_once(ours, env=ours_env)
        run_once(theirs, env=their_env)
    for _ in range(max(rounds, 20)):
        a.append(run_once(ours, env=ours_env))
        b.append(run_once(theirs, env=their_env))
    ma, mb = statistics.median(a), statistics.median(b)
    result = {"label": "bin/lc-cache-lookup vs yellow-research's, alternated", "ours_ms": round(ma * 1000, 2),
              "theirs_ms": round(mb * 1000, 2), "times_faster": round(mb / ma, 2), "rounds": len(a)}
    print(f"{result['label']}: ours {result['ours_ms']} ms, theirs {result['theirs_ms']} ms: "
          f"ours is {result['times_faster']}x faster", flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--yr", help="a checkout of yellow-research, to time its lc-cache-lookup")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--skip-mcp", action="store_true")
    ap.add_argument("--only", help="run only the rows whose label contains this text")
    args = ap.parse_args()
    print(floor_line(), flush=True)
    results = []

    def row(label, argv, **kw):
        if args.only is None or args.only in label:
            # once first, then settle: a hook may start an ingester for what earlier rows left
            # (the lookups' reads log), which would otherwise run through this row's rounds
            run_once(argv, kw.get("stdin"), kw.get("env"))
            wait_ingester(os.path.join(data, "memhooks.db"))
            results.append(compare(label, argv, **kw))

    tmp = tempfile.mkdtemp(prefix="memhooks-hot-")
    try:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        with open(os.path.join(project, "package.json"), "w") as fh:
            json.dump({"dependencies": {"react": "^18.3.1", "zod": "^3.23.0"}}, fh)
        data = os.path.join(tmp, "data")
        os.makedirs(data)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMHOOKS_", "CLAUDE_"))}
        env = dict(base, CLAUDE_PLUGIN_DATA=data, CLAUDE_PROJECT_DIR=project,
                   MEMHOOKS_OFFLINE="1", MEMHOOKS_PYTHON=PYTHON)
        write = subprocess.run([os.path.join(ROOT, "bin", "lc-cache-write"), "tier1", "react",
                                "/facebook/react"], env=env, capture_output=True)
        assert write.returncode == 0, write.stderr
        start = json.dumps({"session_id": "bench", "transcript_path": "/tmp/t", "cwd": project,
                            "hook_event_name": "SessionStart", "source": "startup"}).encode()
        # A first SessionStart writes the launcher/marker and the warm state.
        plugin_env = dict(base, CLAUDE_PLUGIN_DATA=data, CLAUDE_PROJECT_DIR=project,
                          MEMHOOKS_OFFLINE="1", PATH=os.path.dirname(PYTHON) + os.pathsep + base["PATH"])
        subprocess.run([os.path.join(ROOT, "hooks", "session-start")], input=start, env=plugin_env,
                       capture_output=True, timeout=60)
        _wait_for_plugin_venv(data, start, plugin_env)

        shim = os.path.join(ROOT, "bin", "lc-cache-lookup")
        row("bin/lc-cache-lookup react (launcher present)", ["bash", shim, "react"],
                               env=plugin_env, rounds=args.rounds)

        fresh = os.path.join(tmp, "fresh")
        cold_env = dict(plugin_env, CLAUDE_PLUGIN_DATA=fresh, MEMHOOKS_DB=os.path.join(data, "memhooks.db"),
                        PATH=_shell_python3(tmp) + os.pathsep + "/usr/bin:/bin")

        def no_launcher():
            shutil.rmtree(fresh, ignore_errors=True)
            os.makedirs(fresh)

        row("bin/lc-cache-lookup react (no launcher yet, python3 a shell shim)",
                               ["bash", shim, "react"], env=cold_env, rounds=args.rounds, setup=no_launcher)
        # The calls after that first one: it recorded the real interpreter in hot.python.
        no_launcher()
        subprocess.run(["bash", shim, "react"], env=cold_env, capture_output=True, timeout=60)
        assert os.path.exists(os.path.join(fresh, "hot.python")), "the first call wrote no launcher"
        row("bin/lc-cache-lookup react (later calls: python3 a shell shim, hot.python written)",
                               ["bash", shim, "react"], env=cold_env, rounds=args.rounds)

        console = os.path.join(os.path.dirname(PYTHON), "lc-cache-lookup")
        if os.path.exists(console):
            row("lc-cache-lookup react (console script)", [console, "react"],
                                   env=env, rounds=args.rounds)
        else:
            print(f"console script: skipped ({console} not installed)")
        row("python -I -S _entry.py lc-cache-lookup react",
                               [PYTHON, "-I", "-S", ENTRY, "lc-cache-lookup", "react"], env=env,
                               rounds=args.rounds)
        row("hooks/session-start (lockfiles unchanged)",
                               [os.path.join(ROOT, "hooks", "session-start")], stdin=start,
                               env=plugin_env, rounds=args.rounds)
        row("hooks/post-tool-use (50 KB query-docs, journal + spawn)",
                               [os.path.join(ROOT, "hooks", "post-tool-use")], stdin=query_docs_payload(),
                               env=plugin_env, rounds=args.rounds)
        # Every Bash call now reaches both tool hooks (for `ctx7` lookups): an unrelated one
        # must cost no more than the interpreter's start and a byte check.
        ls_call = {"session_id": "bench", "transcript_path": "/tmp/t", "cwd": project, "tool_name": "Bash",
                   "tool_use_id": "toolu_bench", "tool_input": {"command": "ls -la src", "description": "List"}}
        bash_pre = json.dumps(dict(ls_call, hook_event_name="PreToolUse"))
        bash_post = json.dumps(dict(ls_call, hook_event_name="PostToolUse", tool_response={
            "stdout": "-rw-r--r-- 1 dev dev 1024 Dec  7 20:00 file.py\n" * 200, "stderr": "",
            "interrupted": False, "isImage": False, "noOutputExpected": False}))
        row("hooks/pre-tool-use (an unrelated Bash command)", [os.path.join(ROOT, "hooks", "pre-tool-use")],
            stdin=bash_pre.encode(), env=plugin_env, rounds=args.rounds)
        row("hooks/post-tool-use (an unrelated Bash command)", [os.path.join(ROOT, "hooks", "post-tool-use")],
            stdin=bash_post.encode(), env=plugin_env, rounds=args.rounds)
        # The same two hooks the way Claude Code runs them: hooks.json's command through `sh -c`.
        hooks = json.load(open(os.path.join(ROOT, "hooks.json")))["hooks"]
        cc_env = dict(plugin_env, CLAUDE_PLUGIN_ROOT=ROOT)
        for event, stdin in (("SessionStart", start), ("PostToolUse", query_docs_payload())):
            command = hooks[event][0]["hooks"][0]["command"]
            row(f"hooks.json {event} command via sh -c (as Claude Code runs it)", ["sh", "-c", command],
                stdin=stdin, env=cc_env, rounds=args.rounds)
        # What `memhooks install` writes: the python runs the launcher in memhooks' data folder.
        from memhooks.setup.entries import Entries
        from memhooks.setup.launcher import launcher_path, render

        launcher = launcher_path(PYTHON, data)
        with open(launcher, "wb") as out:
            out.write(render(PYTHON, os.path.join(ROOT, "src", "memhooks")))
        installed = Entries(python=PYTHON, entry=launcher)
        pip_env = dict(base, MEMHOOKS_DB=os.path.join(data, "memhooks.db"), CLAUDE_PROJECT_DIR=project,
                       MEMHOOKS_OFFLINE="1")
        row("installed PostToolUse command via sh -c (memhooks install: the launcher)",
            ["sh", "-c", installed.post_tool_use], stdin=query_docs_payload(), env=pip_env,
            rounds=args.rounds)
        row("installed SessionStart command via sh -c (lockfiles unchanged)",
            ["sh", "-c", installed.session_start], stdin=start, env=pip_env, rounds=args.rounds)
        if args.yr:
            found = sorted(os.path.join(d, "lc-cache-lookup") for d, _, files in os.walk(args.yr)
                           if "lc-cache-lookup" in files and ".git" not in d)
            if found:
                # Its own cache, written by its own lc-cache-write, so that both lookups are hits.
                yr_env = dict(env, CLAUDE_PLUGIN_DATA=os.path.join(tmp, "yr-data"))
                os.makedirs(yr_env["CLAUDE_PLUGIN_DATA"])
                yr_bin = os.path.dirname(found[0])
                subprocess.run(["bash", os.path.join(yr_bin, "lc-cache-write"), "tier1", "react",
                                "/facebook/react"], env=yr_env, capture_output=True, timeout=60)
                hit = subprocess.run(["bash", found[0], "react"], env=yr_env, capture_output=True,
                                     timeout=60).stdout.strip()
                print(f"yellow-research ({found[0]}): lookup answers {hit.decode() or '(a miss)'}")
                row("yellow-research lc-cache-lookup react", ["bash", found[0], "react"],
                    env=yr_env, rounds=args.rounds)
                results.append(head_to_head(["bash", shim, "react"], plugin_env,
                                            ["bash", found[0], "react"], yr_env, args.rounds))
            else:
                print(f"yellow-research: no lc-cache-lookup under {args.yr}; skipped")
        if not args.skip_mcp and (args.only is None or args.only in "memhooks mcp"):
            results.append(mcp_initialize_ms(plugin_env, args.rounds))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
