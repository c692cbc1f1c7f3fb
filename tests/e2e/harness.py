"""End-to-end harness: the real Claude Code CLI, offline, against loopback fakes.

How it fits together
--------------------
* The tests run on two CLIs (the ``claude_bin`` fixture is parametrized): ``pinned``,
  ``CLAUDE_CODE_VERSION``, an older release the tests support, and ``newest``, whatever
  ``npm view @anthropic-ai/claude-code version`` answers when the tests start (asked once
  per run; ``MEMHOOKS_E2E_NEWEST=<version>`` names it instead; when it is the pinned version,
  the ``newest`` cases are skipped as duplicates). ``-k pinned`` / ``-k newest`` pick one.
* ``install_claude(version)`` runs ``npm install @anthropic-ai/claude-code@<version>``
  into a cache folder outside git (``$MEMHOOKS_E2E_CACHE/<version>`` or
  ``~/.cache/memhooks-e2e/<version>``), reusing it when present, and returns the native
  ``claude`` binary (it comes from the optional dependency
  ``@anthropic-ai/claude-code-<platform>``; npm's skipped postinstall does not matter).
* ``E2EEnv`` builds one scratch world in a temp dir: a git-less project with
  ``package.json`` + ``package-lock.json`` (react, react-dom, zod), a scratch ``HOME``
  whose ``.claude.json`` trusts the project, ``.claude/settings.json`` (permissions,
  ``enableAllProjectMcpServers``, ``skipWebFetchPreflight``, and a recorder hook that
  saves every SessionStart / PostToolUse / PostToolUseFailure payload), ``.mcp.json``
  with the stub ``context7`` and ``exa`` servers, a self-signed TLS cert for 127.0.0.1,
  and ``MEMHOOKS_DB`` in the temp dir.
* ``E2EEnv.run()`` writes a config and starts ``_runner.py`` - inside ``unshare -n``
  with ``lo`` up when that works on this machine (checked once; set
  ``MEMHOOKS_E2E_NETNS=0`` to disable), else directly.  The runner starts the fake
  Messages API / Context7 API (``fake_api.FakeAnthropic``) and the HTTPS page in that
  namespace, runs ``claude -p PROMPT --output-format json [--plugin-dir REPO]
  --debug-file F`` in its own process group, kills the group afterwards and reports
  back every request the fakes saw.  A ``SessionResult`` wraps it for assertions.

Scripts are lists of steps; each step is a list of ``{"name", "input"}`` tool calls
(see ``fake_api``).  Strings may contain ``{{TLS_BASE}}`` (``https://127.0.0.1:<port>``)
and ``{{API_BASE}}``, filled in by the runner once the servers are bound.

Run the tests: ``pytest -m e2e tests/e2e`` (first run installs the CLI, ~10 s).
"""

from __future__ import annotations

import functools
import glob
import json
import os
import platform
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memhooks.store.bodies import document_text

# The pinned Claude Code CLI version the e2e tests run against besides the newest one (one
# place to bump): the oldest release they are checked on (docs/serving.md, "CLI versions").
CLAUDE_CODE_VERSION = "2.1.197"
PACKAGE = "@anthropic-ai/claude-code"
#: binary path -> its version, for the CLIs the fixture installed
VERSION_OF: dict[str, str] = {}

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
PYTHON = sys.executable


class InstallError(RuntimeError):
    """npm could not provide the CLI (no registry, no npm, ...)."""


# ---------------------------------------------------------------------------
# CLI install


def cache_dir(version: str = CLAUDE_CODE_VERSION) -> Path:
    base = os.environ.get("MEMHOOKS_E2E_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "memhooks-e2e"
    return root / version


def _platform_pkgs() -> list[str]:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform, sys.platform)
    names = [f"claude-code-{system}-{arch}"]
    if system == "linux":
        names.append(f"claude-code-{system}-{arch}-musl")
    return names


def find_claude_binary(folder: Path, version: str = CLAUDE_CODE_VERSION) -> Path | None:
    """The native binary inside an npm install folder, checked with ``--version``."""
    scope = folder / "node_modules" / "@anthropic-ai"
    candidates = [scope / p / "claude" for p in _platform_pkgs()]
    candidates += [Path(p) for p in sorted(glob.glob(str(scope / "claude-code-*" / "claude")))]
    candidates.append(scope / "claude-code" / "bin" / "claude.exe")
    seen = set()
    for c in candidates:
        if c in seen or not c.is_file():
            continue
        seen.add(c)
        try:
            c.chmod(c.stat().st_mode | 0o111)
            with tempfile.TemporaryDirectory(prefix="memhooks-e2e-home-") as home:
                out = subprocess.run(
                    [str(c), "--version"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    env={**_base_env(), "HOME": home},
                )
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and version in out.stdout:
            return c
    return None


@functools.lru_cache(maxsize=1)
def newest_version() -> str:
    """The newest release on the npm registry (`npm view`), asked once per test run."""
    named = os.environ.get("MEMHOOKS_E2E_NEWEST", "").strip()
    if named:
        return named
    npm = shutil.which("npm")
    if not npm:
        raise InstallError("npm is not on PATH")
    try:
        proc = subprocess.run([npm, "view", PACKAGE, "version"], capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise InstallError(f"npm view {PACKAGE} version failed: {e}") from e
    version = proc.stdout.strip().splitlines()[-1].strip() if proc.stdout.strip() else ""
    if proc.returncode != 0 or not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", version):
        raise InstallError(f"npm view {PACKAGE} version said {proc.stdout[-200:]!r} "
                           f"(rc={proc.returncode}): {proc.stderr[-500:]}")
    return version


def install_claude(version: str = CLAUDE_CODE_VERSION) -> Path:
    """Install (or reuse) the pinned CLI and return its native binary; InstallError if impossible."""
    folder = cache_dir(version)
    found = find_claude_binary(folder, version)
    if found:
        VERSION_OF[str(found)] = version
        return found
    npm = shutil.which("npm")
    if not npm:
        raise InstallError("npm is not on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    pkg = folder / "package.json"
    if not pkg.exists():
        pkg.write_text(json.dumps({"name": "memhooks-e2e-cli", "private": True}) + "\n")
    try:
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save",
             "--fetch-retries=2", "--fetch-retry-maxtimeout=10000",
             f"@anthropic-ai/claude-code@{version}"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired as e:
        raise InstallError(f"npm install timed out: {e}") from e
    found = find_claude_binary(folder, version)
    if found:
        VERSION_OF[str(found)] = version
        return found
    tail = (proc.stderr or proc.stdout or "")[-1500:]
    raise InstallError(f"npm install @anthropic-ai/claude-code@{version} failed (rc={proc.returncode}): {tail}")


# The Context7 CLI (npm `ctx7`) the CLI-mode tests run through Bash (one place to bump).
CTX7_VERSION = "0.5.12"


def install_ctx7(version: str = CTX7_VERSION) -> Path:
    """Install (or reuse) the `ctx7` CLI into the cache folder outside git
    (`<cache>/ctx7-<version>`) and return its `node_modules/.bin` folder; InstallError if
    impossible."""
    folder = cache_dir(f"ctx7-{version}")
    bin_dir = folder / "node_modules" / ".bin"
    pkg_json = folder / "node_modules" / "ctx7" / "package.json"

    def installed() -> bool:
        try:
            return (bin_dir / "ctx7").exists() and json.loads(pkg_json.read_text())["version"] == version
        except (OSError, ValueError, KeyError):
            return False

    if installed():
        return bin_dir
    npm = shutil.which("npm")
    if not npm:
        raise InstallError("npm is not on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "package.json").exists():
        (folder / "package.json").write_text(json.dumps({"name": "memhooks-e2e-ctx7", "private": True}) + "\n")
    try:
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save",
                               "--fetch-retries=2", f"ctx7@{version}"],
                              cwd=folder, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired as e:
        raise InstallError(f"npm install ctx7 timed out: {e}") from e
    if installed():
        return bin_dir
    raise InstallError(f"npm install ctx7@{version} failed (rc={proc.returncode}): "
                       f"{(proc.stderr or proc.stdout or '')[-1500:]}")


# ---------------------------------------------------------------------------
# network namespace


@functools.lru_cache(maxsize=1)
def netns_prefix() -> tuple[str, ...] | None:
    """argv prefix that runs a command in a fresh network namespace with lo up, or None."""
    if os.environ.get("MEMHOOKS_E2E_NETNS", "1") == "0":
        return None
    unshare = shutil.which("unshare")
    ip = shutil.which("ip") or ("/usr/sbin/ip" if os.path.exists("/usr/sbin/ip") else None) or (
        "/sbin/ip" if os.path.exists("/sbin/ip") else None
    )
    if not unshare or not ip:
        return None
    probe = "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); c=socket.create_connection(s.getsockname(), timeout=2)"
    for flags in (("-n",), ("-rn",)):
        prefix = (unshare, *flags, "--", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh")
        try:
            r = subprocess.run([*prefix, PYTHON, "-c", probe], capture_output=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            continue
        if r.returncode == 0:
            return prefix
    return None


# ---------------------------------------------------------------------------
# scratch world


def _base_env() -> dict[str, str]:
    """The parent's environment minus anything that would steer or leak into claude."""
    drop = re.compile(
        r"^(ANTHROPIC_|CLAUDE|MCP_|OTEL_|CONTEXT7_|EXA_|MEMHOOKS_|AWS_|GOOGLE_|VERTEX|"
        r"HTTP_PROXY|HTTPS_PROXY|NO_PROXY|http_proxy|https_proxy|no_proxy|NODE_OPTIONS|"
        r"NODE_EXTRA_CA_CERTS|XDG_)"
    )
    return {k: v for k, v in os.environ.items() if not drop.match(k)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PACKAGE_JSON = {
    "name": "e2e-app",
    "version": "1.0.0",
    "private": True,
    "dependencies": {"react": "^18.3.1", "react-dom": "^18.3.1", "zod": "^3.23.8"},
}


def _package_lock() -> dict:
    pkgs: dict[str, dict[str, Any]] = {
        "": {"name": "e2e-app", "version": "1.0.0", "dependencies": PACKAGE_JSON["dependencies"]},
        "node_modules/react": {"version": "18.3.1", "license": "MIT",
                               "dependencies": {"loose-envify": "^1.1.0"}},
        "node_modules/react-dom": {"version": "18.3.1", "license": "MIT",
                                   "dependencies": {"loose-envify": "^1.1.0", "scheduler": "^0.23.2"},
                                   "peerDependencies": {"react": "^18.3.1"}},
        "node_modules/zod": {"version": "3.23.8", "license": "MIT"},
        "node_modules/loose-envify": {"version": "1.4.0", "license": "MIT",
                                      "dependencies": {"js-tokens": "^3.0.0 || ^4.0.0"}},
        "node_modules/js-tokens": {"version": "4.0.0", "license": "MIT"},
        "node_modules/scheduler": {"version": "0.23.2", "license": "MIT",
                                   "dependencies": {"loose-envify": "^1.1.0"}},
    }
    for k, v in pkgs.items():
        if k:
            name = k.split("node_modules/", 1)[1]
            v.setdefault("resolved", f"https://registry.invalid/{name}/-/{name}-{v['version']}.tgz")
    return {"name": "e2e-app", "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": pkgs}


ALLOW = [
    "mcp__context7__*",
    "mcp__exa__*",
    "WebFetch",
    "WebSearch",
    "mcp__plugin_memhooks_memhooks__*",
    "mcp__memhooks__*",
]


@dataclass
class SessionResult:
    rc: int
    stdout: str
    stderr: str
    elapsed: float
    timed_out: bool
    requests: list[dict]
    tls_requests: list[str]
    api_port: int
    tls_port: int
    debug_file: Path
    hook_payloads: list[dict] = field(default_factory=list)
    mcp_log: list[dict] = field(default_factory=list)
    wall: float = 0.0  # whole run incl. runner/namespace start-up and fakes

    # -- what reached the model -------------------------------------------
    def message_bodies(self) -> list[dict]:
        return [r["body"] for r in self.requests if r["kind"] == "messages"]

    def main_bodies(self) -> list[dict]:
        """Requests of the main agent loop (those that offer tools)."""
        return [b for b in self.message_bodies() if b.get("tools")]

    def any_request_contains(self, needle: str) -> bool:
        return any(needle in json.dumps(b, ensure_ascii=False) for b in self.message_bodies())

    def tool_result_text(self, tool_use_id: str) -> str | None:
        from fake_api import tool_results

        for body in reversed(self.message_bodies()):
            res = tool_results(body)
            if tool_use_id in res:
                return res[tool_use_id]
        return None

    def output_json(self) -> dict | None:
        try:
            return json.loads(self.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None

    def payloads(self, event: str, tool: str | None = None) -> list[dict]:
        return [
            p["payload"] for p in self.hook_payloads
            if p["payload"].get("hook_event_name") == event
            and (tool is None or p["payload"].get("tool_name") == tool)
        ]

    def hook_runs(self, include_recorder: bool = False) -> list[dict]:
        """Hook executions from the debug log: event, matcher, command, status, ms."""
        pat = re.compile(
            r"Hooks: (\w+):(\S*) (\[.*?\])(?: \(plugin [^)]*\))? finished with status (-?\d+) \((\d+)ms\)"
        )
        runs: list[dict] = []
        try:
            text = self.debug_file.read_text(errors="replace")
        except OSError:
            return runs
        for m in pat.finditer(text):
            if not include_recorder and "_record_hook.py" in m.group(3):
                continue
            runs.append({"event": m.group(1), "matcher": m.group(2), "command": m.group(3),
                         "status": int(m.group(4)), "ms": int(m.group(5))})
        return runs

    def hook_runs_logged(self) -> bool:
        """Whether this CLI's debug log names every hook run with its status and time
        (2.1.296 and later); older ones log only failures and hooks that printed something."""
        try:
            return "finished with status" in self.debug_file.read_text(errors="replace")
        except OSError:
            return False

    def hook_errors(self) -> list[str]:
        """Hook runs the debug log reports as failed, in either CLI's format: a non-zero
        status (newer), or `"Hook <Event>:<matcher> (<Event>) error:` (2.1.197 and such)."""
        out = [f"{h['event']}:{h['matcher']} {h['command']} status {h['status']}"
               for h in self.hook_runs(include_recorder=True) if h["status"] != 0]
        try:
            text = self.debug_file.read_text(errors="replace")
        except OSError:
            return out
        out += [m.group(0) for m in re.finditer(r"Hook (\w+):(\S*) \((\w+)\) error:[^\n]{0,300}", text)]
        return out

    def debug_tail(self, n: int = 4000) -> str:
        try:
            return self.debug_file.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def describe(self) -> str:
        """Diagnostics for assertion messages."""
        return (
            f"rc={self.rc} timed_out={self.timed_out} elapsed={self.elapsed:.1f}s\n"
            f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}\n"
            f"requests: {[(r['kind'], r['path']) for r in self.requests]}\n"
            f"hooks: {[(p['payload'].get('hook_event_name'), p['payload'].get('tool_name')) for p in self.hook_payloads]}\n"
            f"debug tail:\n{self.debug_tail()}"
        )


class E2EEnv:
    """One scratch project + HOME + DB; ``run()`` may be called several times (same ports)."""

    def __init__(self, root: Path, claude: Path, *, lockfiles: bool = True) -> None:
        self.root = Path(os.path.realpath(root))
        self.claude = claude
        self.cli_version = VERSION_OF.get(str(claude), CLAUDE_CODE_VERSION)
        self.project = self.root / "project"
        self.home = self.root / "home"
        self.db = self.root / "memhooks.db"
        self.logs = self.root / "logs"
        self.hooks_dir = self.root / "hook-payloads"
        self.mcp_log = self.root / "mcp-stub.jsonl"
        for d in (self.project, self.home, self.logs, self.hooks_dir, self.project / ".claude"):
            d.mkdir(parents=True, exist_ok=True)
        self.cert, self.key = self._make_cert()
        self.api_port = free_port()
        self.tls_port = free_port()
        self.runs = 0
        self.extra_env: dict[str, str] = {}  # added to every run's environment (e.g. MEMHOOKS_SERVE=0)
        if lockfiles:
            (self.project / "package.json").write_text(json.dumps(PACKAGE_JSON, indent=2) + "\n")
            (self.project / "package-lock.json").write_text(json.dumps(_package_lock(), indent=2) + "\n")
        self.settings: dict[str, Any] = {
            "permissions": {"allow": list(ALLOW)},
            "enableAllProjectMcpServers": True,
            "skipWebFetchPreflight": True,
            "hooks": {
                ev: [{"matcher": "*", "hooks": [{
                    "type": "command",
                    "command": f"{_q(PYTHON)} {_q(str(HERE / '_record_hook.py'))} {_q(str(self.hooks_dir))}",
                    "timeout": 30,
                }]}]
                for ev in ("SessionStart", "PostToolUse", "PostToolUseFailure")
            },
        }
        self.write_settings()
        self.mcp_servers = {
            "context7": {"type": "stdio", "command": PYTHON, "args": [str(HERE / "stub_context7.py")]},
            "exa": {"type": "stdio", "command": PYTHON, "args": [str(HERE / "stub_exa.py")]},
        }
        self.write_mcp_json()
        self._write_trust()

    # -- files ---------------------------------------------------------------
    def _make_cert(self) -> tuple[str, str]:
        from fake_api import make_cert

        d = self.root / "tls"
        d.mkdir(exist_ok=True)
        return make_cert(str(d))

    def settings_path(self) -> Path:
        return self.project / ".claude" / "settings.json"

    def write_settings(self) -> None:
        self.settings_path().write_text(json.dumps(self.settings, indent=2) + "\n")

    def write_mcp_json(self) -> None:
        path = self.project / ".mcp.json"
        current = json.loads(path.read_text()) if path.exists() else {}
        servers = current.get("mcpServers", {})
        servers.update(self.mcp_servers)
        current["mcpServers"] = servers
        path.write_text(json.dumps(current, indent=2) + "\n")

    def _write_trust(self) -> None:
        dirs = {str(self.project)}
        try:
            top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=self.project,
                                 capture_output=True, text=True, timeout=10)
            if top.returncode == 0 and top.stdout.strip():
                dirs.add(os.path.realpath(top.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
        cfg = {
            "hasCompletedOnboarding": True,
            "projects": {d: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
                         for d in sorted(dirs)},
        }
        (self.home / ".claude.json").write_text(json.dumps(cfg, indent=2) + "\n")

    # -- environment ---------------------------------------------------------
    def env(self, api_base: str = "{{API_BASE}}") -> dict[str, str]:
        env = _base_env()
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            ANTHROPIC_BASE_URL=api_base,
            ANTHROPIC_API_KEY="sk-test",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
            MCP_CONNECTION_NONBLOCKING="0",
            MCP_CONNECT_TIMEOUT_MS="20000",
            NODE_EXTRA_CA_CERTS=self.cert,
            CONTEXT7_API_URL=f"{api_base}/api",
            MEMHOOKS_DB=str(self.db),
            MEMHOOKS_PYTHON=PYTHON,
            STUB_MCP_LOG=str(self.mcp_log),
            # The scratch project pins react 18.3.1, which the fake API lists: pinning would
            # send every unversioned react call as /facebook/react/v18.3.1. Only the pinning
            # test (test_pin_e2e.py) turns it on.
            MEMHOOKS_PIN_VERSIONS="0",
        )
        env.update(self.extra_env)
        return env

    def tool_env(self) -> dict[str, str]:
        """Environment for running memhooks' own commands (lc-cache-lookup, memhooks install) here."""
        env = self.env(api_base=f"http://127.0.0.1:{self.api_port}")
        env["CLAUDE_PROJECT_DIR"] = str(self.project)
        env["MEMHOOKS_OFFLINE"] = "1"
        return env

    # -- running -------------------------------------------------------------
    def run(
        self,
        prompt: str,
        script: list[list[dict]],
        *,
        plugin_dir: Path | None = REPO_ROOT,
        final_text: str = "All done.",
        timeout: float = 90,
        extra_args: list[str] | None = None,
    ) -> SessionResult:
        self.runs += 1
        n = self.runs
        debug = self.logs / f"debug-{n}.log"
        out = self.logs / f"result-{n}.json"
        cmd = [str(self.claude), "-p", prompt, "--output-format", "json", "--debug-file", str(debug)]
        if plugin_dir is not None:
            cmd += ["--plugin-dir", str(plugin_dir)]
        cmd += extra_args or []
        before_hooks = set(os.listdir(self.hooks_dir))
        before_mcp = self.mcp_log.stat().st_size if self.mcp_log.exists() else 0
        cfg = {
            "script": script,
            "final_text": final_text,
            "api_port": self.api_port,
            "tls_port": self.tls_port,
            "cert": self.cert,
            "key": self.key,
            "cmd": cmd,
            "env": self.env(),
            "cwd": str(self.project),
            "timeout": timeout,
            "out": str(out),
        }
        cfg_path = self.logs / f"config-{n}.json"
        cfg_path.write_text(json.dumps(cfg, indent=1))
        prefix = list(netns_prefix() or ())
        t0 = time.monotonic()
        proc = subprocess.run(
            [*prefix, PYTHON, str(HERE / "_runner.py"), str(cfg_path)],
            capture_output=True, text=True, timeout=timeout + 30, stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"runner failed rc={proc.returncode}: {proc.stderr[-3000:]}")
        res = json.loads(out.read_text())
        hooks = []
        for name in sorted(set(os.listdir(self.hooks_dir)) - before_hooks):
            try:
                hooks.append(json.loads((self.hooks_dir / name).read_text()))
            except ValueError:
                pass
        mcp = []
        if self.mcp_log.exists():
            with open(self.mcp_log, encoding="utf-8") as f:
                f.seek(before_mcp)
                mcp = [json.loads(line) for line in f if line.strip()]
        self.api_port, self.tls_port = res["api_port"], res["tls_port"]
        return SessionResult(
            rc=res["rc"], stdout=res["stdout"], stderr=res["stderr"], elapsed=res["elapsed"],
            timed_out=res["timed_out"], requests=res["requests"], tls_requests=res["tls_requests"],
            api_port=res["api_port"], tls_port=res["tls_port"], debug_file=debug,
            hook_payloads=hooks, mcp_log=mcp, wall=time.monotonic() - t0,
        )

    # -- DB ------------------------------------------------------------------
    def wait_ingested(self, timeout: float = 10.0) -> None:
        """Wait until the journal has no pending events (background ingest may lag the session)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                journal = Path(self.db).parent / "journal.db"
                with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5) as con:
                    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                    if "events" not in tables:
                        return
                    cols = {r[1] for r in con.execute("PRAGMA table_info(events)")}
                    if "state" not in cols:
                        return
                    pending = con.execute("SELECT count(*) FROM events WHERE state='pending'").fetchone()[0]
                    if pending == 0:
                        return
            except sqlite3.Error:
                pass
            time.sleep(0.2)

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5) as con:
            con.create_function("document_text", 1, document_text)  # a document's text
            journal = Path(self.db).parent / "journal.db"  # the raw events
            if journal.exists():
                con.execute("ATTACH DATABASE ? AS journal", (f"file:{journal}?mode=ro",))
            return list(con.execute(sql, params))


def _q(s: str) -> str:
    import shlex

    return shlex.quote(s)


# ---------------------------------------------------------------------------
# payload fixtures


def replace_strings(obj: Any, replacements: dict[str, str]) -> Any:
    """Replace substrings in every string of a JSON value, longest key first
    (scratch paths -> placeholders here; placeholders -> addresses in _runner)."""
    if isinstance(obj, str):
        for old, new in sorted(replacements.items(), key=lambda kv: -len(kv[0])):
            obj = obj.replace(old, new)
        return obj
    if isinstance(obj, list):
        return [replace_strings(x, replacements) for x in obj]
    if isinstance(obj, dict):
        return {k: replace_strings(v, replacements) for k, v in obj.items()}
    return obj


def save_payload_fixtures(env: E2EEnv, result: SessionResult, dest: Path, prefix: str = "") -> list[Path]:
    """Write the session's hook payloads (exact stdin JSON, paths replaced by placeholders).

    Files are ``<prefix><event>-<tool or source>.json``; ``INDEX.json`` in ``dest``
    records the CLI version, the placeholders and the CLAUDE* variables each hook saw.
    """
    dest.mkdir(parents=True, exist_ok=True)
    repl = {
        str(env.home): "<HOME>",
        str(env.project): "<PROJECT>",
        str(env.root): "<TMP>",
        str(REPO_ROOT): "<PLUGIN_ROOT>",
        f"127.0.0.1:{result.tls_port}": "127.0.0.1:<TLS_PORT>",
        f"127.0.0.1:{result.api_port}": "127.0.0.1:<API_PORT>",
    }
    # Claude Code's project-key form of the path (~/.claude/projects/-tmp-x-project/…)
    repl[re.sub(r"[^A-Za-z0-9]", "-", str(env.project))] = "-<PROJECT-KEY>"
    index_path = dest / "INDEX.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    index.update(
        cli_version=env.cli_version,
        generated_by="MEMHOOKS_E2E_SAVE_PAYLOADS=1 pytest -m e2e tests/e2e (tests/e2e/harness.py)",
        placeholders=sorted(set(repl.values())),
        note=("Each file is the exact stdin JSON of one hook call. hook_env lists the CLAUDE* "
              "variables seen by the recording hook, a project-settings hook: plugin hooks "
              "also get CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA. Scripted by the fake API; "
              "tool outputs come from tests/e2e/stub_*.py and fake_api.py."),
    )
    files = index.setdefault("files", {})
    written = []
    for rec in result.hook_payloads:
        p = rec["payload"]
        ev = p.get("hook_event_name", "unknown")
        tool = p.get("tool_name") or p.get("source") or ""
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{prefix}{ev}-{tool}".rstrip("-"))
        path = dest / f"{name}.json"
        k = 2
        while path in written:
            path = dest / f"{name}-{k}.json"
            k += 1
        path.write_text(json.dumps(replace_strings(p, repl), indent=2, ensure_ascii=False) + "\n")
        files[path.name] = {"hook_env": replace_strings(rec.get("env", {}), repl)}
        written.append(path)
    index_path.write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return written


# ----------------------------------------------------------------------------- the shared fixture

def unavailable(reason: str) -> None:
    """Skip, except under CI=true (CI reaches the npm registry), where it is a failure."""
    import pytest

    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"e2e prerequisites missing under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


CLIS = ("pinned", "newest")


def cli_version(which: str) -> str:
    return CLAUDE_CODE_VERSION if which == "pinned" else newest_version()


def _claude_bin(request) -> Path:
    """The CLI's native binary (`pinned` or `newest`), npm-installed once into the cache folder."""
    import pytest

    if not shutil.which("openssl"):
        unavailable("openssl is needed for the WebFetch TLS page")
    try:
        version = cli_version(request.param)
        if request.param == "newest" and version == CLAUDE_CODE_VERSION:
            pytest.skip(f"the newest CLI is the pinned one ({version}): its cases run as `pinned`")
        return install_claude(version)
    except InstallError as e:
        unavailable(f"cannot install {PACKAGE} ({request.param}): {e}")
    raise AssertionError("unreachable")


def _fixture():
    import pytest

    return pytest.fixture(scope="session", name="claude_bin", params=CLIS)(_claude_bin)


claude_bin = _fixture()  # e2e test modules import it: `from harness import claude_bin`


def ctx7_env(tmp: Path, claude_bin, allow: str, **extra_env: str) -> E2EEnv:
    """An e2e environment whose PATH has the real ctx7 CLI (installed once, outside git) and
    whose permissions allow `allow` (a Bash rule); skips when ctx7 cannot be installed."""
    try:
        ctx7_bin = install_ctx7()
    except InstallError as e:
        unavailable(f"cannot install ctx7@{CTX7_VERSION}: {e}")
    env = E2EEnv(tmp, claude_bin)
    env.settings["permissions"]["allow"].append(allow)
    env.write_settings()
    env.extra_env.update(PATH=f"{ctx7_bin}:{_base_env().get('PATH', '/usr/bin:/bin')}",
                         CTX7_TELEMETRY_DISABLED="1", **extra_env)
    return env
