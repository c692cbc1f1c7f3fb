"""Record real Claude Code session transcripts for the import-transcripts tests.

Runs the pinned CLI offline (harness.py: fake Messages API, stub Context7 and EXA MCP
servers, an HTTPS page for WebFetch) through three scripted sessions, then copies the
transcripts the CLI wrote under ``$HOME/.claude/projects`` into
``tests/fixtures/transcripts/``, sanitised: scratch paths become ``/home/user/…``
placeholders and loopback ports fixed numbers.

* ``capture``: Context7 resolve-library-id and query-docs, WebFetch, EXA web_search_exa,
  WebSearch, then a second turn with EXA web_fetch_exa.
* ``errors``: Context7 error texts (unknown library, missing ID) and an EXA ``isError``.
* ``denied``: tools the settings do not allow (WebFetch, EXA, Bash) under ``-p``: denied.

Usage: ``python tests/e2e/record_transcripts.py`` (a minute at most).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from stub_exa import FAIL_WORD  # noqa: E402

DEST = harness.REPO_ROOT / "tests" / "fixtures" / "transcripts"
HOME = "/home/user"
PROJECT = "/home/user/code/demo-app"

SESSIONS = {
    "capture": ([
        [
            {"name": "mcp__context7__resolve-library-id", "input": {"libraryName": "react", "query": "hooks"}},
            {"name": "mcp__context7__query-docs",
             "input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"}},
            {"name": "WebFetch", "input": {"url": "{{TLS_BASE}}/page", "prompt": "How do I pin the flux capacitor?"}},
            {"name": "mcp__exa__web_search_exa", "input": {"query": "zod performance benchmarks"}},
            {"name": "WebSearch", "input": {"query": "zod performance"}},
        ],
        [{"name": "mcp__exa__web_fetch_exa", "input": {"urls": ["https://exa-stub.invalid/zod-guide"]}}],
    ], None),
    "errors": ([[
        {"name": "mcp__context7__resolve-library-id", "input": {"libraryName": "nosuchlib", "query": "anything"}},
        {"name": "mcp__context7__query-docs", "input": {"libraryId": "/nope/missing", "query": "anything"}},
        {"name": "mcp__exa__web_search_exa", "input": {"query": f"zod {FAIL_WORD}"}},
    ]], None),
    "denied": ([[
        {"name": "WebFetch", "input": {"url": "{{TLS_BASE}}/page", "prompt": "What does it say?"}},
        {"name": "mcp__exa__web_search_exa", "input": {"query": "zod refine"}},
        {"name": "Bash", "input": {"command": "echo hello", "description": "Say hello"}},
        {"name": "mcp__context7__resolve-library-id", "input": {"libraryName": "zod", "query": "refine"}},
    ]], ["mcp__context7__*"]),
}


def sanitise(text: str, env: harness.E2EEnv, result: harness.SessionResult) -> str:
    repl = {
        str(env.project): PROJECT,
        str(env.home): HOME,
        str(env.root): "/home/user/tmp",
        str(harness.REPO_ROOT): "/home/user/memhooks",
        f"127.0.0.1:{result.tls_port}": "127.0.0.1:8443",
        f"127.0.0.1:{result.api_port}": "127.0.0.1:8080",
        sys.executable: "/usr/bin/python3",
    }
    repl[re.sub(r"[^A-Za-z0-9]", "-", str(env.project))] = re.sub(r"[^A-Za-z0-9]", "-", PROJECT)
    for old, new in sorted(repl.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(old, new)
        text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    return text


def main() -> int:
    claude = harness.install_claude(harness.newest_version())  # the fixtures come from the newest CLI
    DEST.mkdir(parents=True, exist_ok=True)
    for name, (script, allow) in SESSIONS.items():
        with tempfile.TemporaryDirectory(prefix="memhooks-rec-") as tmp:
            env = harness.E2EEnv(Path(tmp), claude)
            if allow is not None:
                env.settings["permissions"]["allow"] = allow
                env.write_settings()
            r = env.run("Look up the docs, please.", script, plugin_dir=None)
            if r.rc != 0:
                print(r.describe())
                return 1
            files = sorted((env.home / ".claude" / "projects").rglob("*.jsonl"))
            for i, f in enumerate(files):
                out = DEST / (f"{name}.jsonl" if i == 0 else f"{name}-{i}.jsonl")
                out.write_text(sanitise(f.read_text(encoding="utf-8"), env, r), encoding="utf-8")
                print(f"{out.relative_to(harness.REPO_ROOT)}: {out.stat().st_size:,} bytes")
            shutil.rmtree(env.root / "home", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
