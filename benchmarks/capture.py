"""Benchmark: whole-process time of hooks/post-tool-use with a 50 KB query-docs payload,
and the hook on a 2 MiB adversarial payload (every redaction rule's worst cases at once).

Reported as the ratio of medians to `python -c pass` and `python -I -S -c pass`, run
alternately in the same loop. Usage: python benchmarks/capture.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def payload(size: int = 50 * 1024) -> bytes:
    chunk = ("### useEffect cleanup\n\nSource: https://react.dev/reference/react/useEffect\n\n"
             "The cleanup function runs before the effect runs again.\n\n```js\n"
             "useEffect(() => {\n  const id = setInterval(tick, 1000);\n"
             "  return () => clearInterval(id);\n}, []);\n```\n\n")
    text = (chunk * (size // len(chunk) + 1))[:size]
    return json.dumps({
        "session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": ROOT,
        "hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
        "tool_input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"},
        "tool_response": [{"type": "text", "text": text}], "tool_use_id": "toolu_bench",
    }).encode()


def adversarial(size: int = 2 * 1024 * 1024) -> bytes:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from _adversarial import everything

    return json.dumps({
        "session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": ROOT,
        "hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
        "tool_input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"},
        "tool_response": [{"type": "text", "text": everything(size)}], "tool_use_id": "toolu_bench",
    }).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--adversarial-rounds", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MEMHOOKS_DB=os.path.join(tmp, "memhooks.db"),
                   MEMHOOKS_PYTHON=sys.executable, MEMHOOKS_NO_SPAWN="1")
        data = payload()
        print(f"payload: {len(data)} bytes")
        compare("hooks/post-tool-use (journal only)", [os.path.join(ROOT, "hooks", "post-tool-use")],
                stdin=data, env=env, rounds=args.rounds)
        env_spawn = dict(env)
        env_spawn.pop("MEMHOOKS_NO_SPAWN")
        compare("hooks/post-tool-use (journal + detached ingest spawn)",
                [os.path.join(ROOT, "hooks", "post-tool-use")], stdin=data, env=env_spawn,
                rounds=args.rounds)
        bad = adversarial()
        print(f"adversarial payload: {len(bad)} bytes (every redaction rule's worst cases)")
        compare("hooks/post-tool-use, 2 MiB adversarial payload (journal only)",
                [os.path.join(ROOT, "hooks", "post-tool-use")], stdin=bad, env=env,
                rounds=args.adversarial_rounds)


if __name__ == "__main__":
    main()
