"""The Python the hooks use, for `memhooks doctor`: its version, and that it finds (or, with
`deep`, imports) every dependency memhooks needs (memhooks.deps.MODULES)."""

from __future__ import annotations

import os
import subprocess

from memhooks.bootstrap import default_state_dir, read_marker
from memhooks.deps import MODULES as DEPS

PY_PROBE = (
    "import sys, importlib\n"
    "bad = []\n"
    "for m in %r:\n"
    "    try:\n"
    "        importlib.import_module(m)\n"
    "    except Exception as e:\n"
    "        bad.append('%%s (%%s)' %% (m, type(e).__name__))\n"
    "print('%%d.%%d.%%d' %% sys.version_info[:3])\n"
    "print(','.join(bad))\n"
) % (DEPS,)
# The quick probe finds each dependency without importing it (a few ms, where importing
# pydantic, mcp and httpx takes seconds on a busy machine); `doctor --deep` imports them.
PY_FIND = (
    "import sys\n"
    "from importlib.util import find_spec\n"
    "bad = []\n"
    "for m in %r:\n"
    "    try:\n"
    "        if find_spec(m) is None:\n"
    "            bad.append('%%s (not installed)' %% m)\n"
    "    except Exception as e:\n"
    "        bad.append('%%s (%%s)' %% (m, type(e).__name__))\n"
    "print('%%d.%%d.%%d' %% sys.version_info[:3])\n"
    "print(','.join(bad))\n"
) % (DEPS,)


def probe_python(python: str, timeout: float = 60.0, *, deep: bool = True) -> tuple[str, str]:
    """(status, detail) for an interpreter that must run the ingester / MCP server: its
    version, and that it finds (`deep`: imports) every dependency."""
    try:
        proc = subprocess.run([python, "-c", PY_PROBE if deep else PY_FIND],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, cwd=os.path.expanduser("~") or "/")
    except (OSError, subprocess.SubprocessError) as exc:
        return "fail", f"{python}: cannot run ({exc})"
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    if proc.returncode != 0 or not lines:
        return "fail", f"{python}: cannot run (exit {proc.returncode})"
    version = lines[0]
    try:
        ok_version = tuple(int(x) for x in version.split(".")[:2]) >= (3, 11)
    except ValueError:
        ok_version = False
    missing = lines[1] if len(lines) > 1 else ""
    if not ok_version:
        return "fail", f"{python}: Python {version} (memhooks needs 3.11+)"
    if missing:
        return "fail", f"{python}: Python {version}, cannot {'import' if deep else 'find'} {missing}"
    if deep:
        return "ok", f"{python}: Python {version}, dependencies import"
    return "ok", f"{python}: Python {version}, dependencies found (--deep imports them)"


def plugin_pythons() -> tuple[list[str], str]:
    """Pythons the plugin shims would use, and a note."""
    user = os.environ.get("MEMHOOKS_PYTHON", "").strip()
    if user:
        return [user], "MEMHOOKS_PYTHON"
    state = default_state_dir()
    marker = read_marker(state)
    if marker["full"]:
        return [marker["full"]], f"cached in {os.path.join(state, 'python.marker')}"
    return [], f"no python with the dependencies cached in {state} yet"
