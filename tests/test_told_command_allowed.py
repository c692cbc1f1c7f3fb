"""One rule: the lc-cache command SessionStart tells the agent to run is one that the rules
`memhooks install --allow` writes cover, in every install mode. Real folder layouts (a venv,
activated or not; uv tool; pipx; a plugin from a marketplace; `--plugin-dir` on a checkout),
the real SessionStart context text, and Claude Code's rule form `Bash(PREFIX *)` (a command
matches when it is PREFIX, a space, and anything)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memhooks.setup.entries import Entries, allow_rules, plugin_allow_rules
from memhooks.warm.context import build_context, lookup_command

ROOT = Path(__file__).resolve().parent.parent


def covered(command: str, rules: list[str]) -> bool:
    """Whether a Bash allow rule `Bash(PREFIX *)` lets `command` run without approval."""
    for rule in rules:
        m = re.fullmatch(r"Bash\((.*) \*\)", rule)
        if m and command.startswith(m.group(1) + " "):
            return True
    return False


def told_command(context: str) -> str:
    """The command line SessionStart's context tells the agent to run, with example args."""
    m = re.search(r"run `(.+) ID TOPIC`", context)
    assert m, context
    return f"{m.group(1)} /facebook/react useEffect cleanup"


def script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def scripts_layout(tmp_path: Path, bin_dir: Path) -> tuple[str, str]:
    """An interpreter with console scripts beside it and the package in site-packages."""
    python = script(bin_dir / "python")
    for name in ("lc-cache-lookup", "lc-cache-lookup-docs"):
        script(bin_dir / name)
    package = bin_dir.parent / "lib" / "python3.11" / "site-packages" / "memhooks"
    package.mkdir(parents=True)
    return str(python), str(package)


MODES = {
    "pip venv": lambda t: scripts_layout(t, t / "project" / ".venv" / "bin"),
    "uv tool": lambda t: scripts_layout(t, t / "home" / ".local" / "share" / "uv" / "tools" / "memhooks" / "bin"),
    "pipx": lambda t: scripts_layout(t, t / "home" / ".local" / "share" / "pipx" / "venvs" / "memhooks" / "bin"),
}


@pytest.mark.parametrize("activated", [False, True])
@pytest.mark.parametrize("mode", list(MODES))
def test_installed_modes_tell_a_command_their_rules_cover(mode, activated, tmp_path, monkeypatch):
    python, package = MODES[mode](tmp_path)
    if activated:  # the venv's bin (or ~/.local/bin for uv/pipx links) is on PATH
        monkeypatch.setenv("PATH", f"{os.path.dirname(python)}:{os.environ.get('PATH', '')}")
    rules = allow_rules(Entries(python=python, entry=os.path.join(package, "_entry.py"), package=package))
    for name in ("lc-cache-lookup", "lc-cache-lookup-docs"):
        told = lookup_command(name, python, package)
        assert told == f'"{os.path.dirname(python)}/{name}"'
        assert covered(f"{told} react", rules), (told, rules)
    assert not covered("lc-cache-lookup-docs /facebook/react hooks", rules)  # why the bare name is never told


@pytest.mark.parametrize("mode", ["plugin from a marketplace", "--plugin-dir"])
def test_plugin_modes_tell_a_command_their_rules_cover(mode, tmp_path):
    root = (tmp_path / "home" / ".claude" / "plugins" / "cache" / "memhooks" / "memhooks" / "0.1.0"
            if mode != "--plugin-dir" else tmp_path / "checkout")
    for name in ("lc-cache-lookup", "lc-cache-lookup-docs"):
        script(root / "bin" / name)
    package = root / "src" / "memhooks"
    package.mkdir(parents=True)
    rules = plugin_allow_rules(str(root))
    for name in ("lc-cache-lookup", "lc-cache-lookup-docs"):
        told = lookup_command(name, sys.executable, str(package))
        assert told == f'bash "{root}/bin/{name}"'
        assert covered(f"{told} /facebook/react hooks", rules), (told, rules)


def test_this_checkouts_session_start_tells_what_its_rules_cover():
    """The real context text of this install (an editable install of a checkout: the bin/
    shims win), against the rules `install --allow` writes for this Python."""
    from memhooks.setup.entries import default_entries

    context = build_context([{"name": "react", "version": "18.2.0", "library_id": "/facebook/react"}])
    assert covered(told_command(context), allow_rules(default_entries()))


def test_session_start_of_a_plugin_root_tells_what_its_install_allow_writes(tmp_path):
    """SessionStart run from this checkout as a plugin (`--plugin-dir`): the command it prints
    is covered by the rules its own bin/memhooks `install --allow` would write."""
    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(ROOT), CLAUDE_PROJECT_DIR=str(tmp_path),
               MEMHOOKS_DB=str(tmp_path / "memhooks.db"), MEMHOOKS_OFFLINE="1", MEMHOOKS_PYTHON=sys.executable)
    code = ("from memhooks.warm.context import build_context; "
            "print(build_context([{'name': 'react', 'version': '18.2.0', 'library_id': '/facebook/react'}]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert covered(told_command(out.stdout), plugin_allow_rules(str(ROOT)))
