"""Write the matchers of the plugin's hooks.json from the routing table (memhooks.tools, which
builds them from the fixed part and the docs sources' rows, memhooks.doc_sources).

    python scripts/gen_hooks_json.py          # rewrite hooks.json in place
    python scripts/gen_hooks_json.py --check  # exit 1 when hooks.json differs

Only the first entry's `matcher` of PreToolUse, PostToolUse and PostToolUseFailure is
generated; every other entry (another matcher, e.g. one for Bash) and field is kept as it is.
tests/test_plugin_layout.py keeps hooks.json equal to what this writes.
"""

import json
import sys
from pathlib import Path

from memhooks.tools import SERVE_MATCHER, TOOL_MATCHER

HOOKS_JSON = Path(__file__).resolve().parent.parent / "hooks.json"
GENERATED = {"PreToolUse": SERVE_MATCHER, "PostToolUse": TOOL_MATCHER, "PostToolUseFailure": TOOL_MATCHER}


def generated(text: str) -> str:
    data = json.loads(text)
    for event, matcher in GENERATED.items():
        data["hooks"][event][0]["matcher"] = matcher
    return render(data)


def render(data: dict) -> str:
    """hooks.json's own layout: one line per hook command."""
    out = ["{", f'  "description": {json.dumps(data["description"], ensure_ascii=False)},', '  "hooks": {']
    events = list(data["hooks"].items())
    for i, (event, entries) in enumerate(events):
        out.append(f'    {json.dumps(event)}: [')
        for j, entry in enumerate(entries):
            out.append("      {")
            out.append(f'        "matcher": {json.dumps(entry["matcher"], ensure_ascii=False)},')
            out.append('        "hooks": [')
            hooks = entry["hooks"]
            for k, hook in enumerate(hooks):
                body = ", ".join(f"{json.dumps(key)}: {json.dumps(v, ensure_ascii=False)}" for key, v in hook.items())
                out.append(f"          {{ {body} }}{',' if k < len(hooks) - 1 else ''}")
            out.append("        ]")
            out.append("      }" + ("," if j < len(entries) - 1 else ""))
        out.append("    ]" + ("," if i < len(events) - 1 else ""))
    out += ["  }", "}", ""]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    current = HOOKS_JSON.read_text(encoding="utf-8")
    want = generated(current)
    if "--check" in argv:
        if current != want:
            print("hooks.json differs from the generated matchers: run python scripts/gen_hooks_json.py")
            return 1
        return 0
    HOOKS_JSON.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
