"""Hook that records its stdin payload (and which CLAUDE_* variables it saw) to a folder.

Installed by the harness in the test project's ``.claude/settings.json`` next to
memhooks' own hooks, for SessionStart, PostToolUse and PostToolUseFailure.  Prints
nothing, exits 0, so it never changes the session.  Usage: ``_record_hook.py DIR``.
"""

import json
import os
import sys
import time

out_dir = sys.argv[1]
raw = sys.stdin.buffer.read()
try:
    payload = json.loads(raw)
except ValueError:
    payload = {"_unparsed": raw.decode("utf-8", "replace")}
SHOWN = {"CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_ENV_FILE", "CLAUDECODE"}
# Values only for the known path-like variables; names only for the rest.
env = {
    k: (os.environ[k] if k in SHOWN else "<set>")
    for k in sorted(os.environ)
    if k.startswith("CLAUDE")
}
event = payload.get("hook_event_name", "unknown")
tool = payload.get("tool_name") or payload.get("source") or ""
name = f"{time.time_ns()}-{os.getpid()}-{event}-{tool}".replace("/", "_")
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, name + ".json"), "w", encoding="utf-8") as f:
    json.dump({"payload": payload, "env": env, "cwd": os.getcwd()}, f, indent=1)
