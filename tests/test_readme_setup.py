"""The README's set-up lines, run as written on a fresh HOME whose PATH lacks ~/.local/bin
(a fresh login: the folder does not exist when the shell starts): `uv tool install .`,
`pipx install .` and the venv line each exit 0, register the hooks and the MCP server, and
touch no network but the package index the install itself uses (MEMHOOKS_OFFLINE for the
warm). uv and pipx come from a throwaway venv when they are not installed; a tool that
cannot be had skips its case."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def readme_lines() -> dict[str, str]:
    """The set-up lines of the README: the uv line, its pipx form, the venv line."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    uv = next(b for b in blocks if "uv tool install ." in b).strip()
    venv = next(b for b in blocks if "python3 -m venv" in b).strip()
    return {"uv": uv, "pipx": uv.replace("uv tool install .", "pipx install ."), "venv": venv}


def test_the_uv_line_puts_local_bin_on_path_itself():
    lines = readme_lines()
    for tool in ("uv", "pipx"):
        assert lines[tool].startswith('export PATH="$HOME/.local/bin:$PATH"; ')


@pytest.fixture(scope="module")
def tools(tmp_path_factory) -> Path:
    """A folder with `uv` and `pipx` (the machine's, else pip-installed into a venv)."""
    folder = tmp_path_factory.mktemp("tools")
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    missing = [t for t in ("uv", "pipx") if shutil.which(t) is None]
    for t in ("uv", "pipx"):
        if shutil.which(t):
            (bin_dir / t).symlink_to(shutil.which(t))
    if missing:
        venv = folder / "venv"
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True)
        if made.returncode == 0:
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *missing], capture_output=True,
                           timeout=600)
        for t in missing:
            if (venv / "bin" / t).exists():
                (bin_dir / t).symlink_to(venv / "bin" / t)
    return bin_dir


def checkout(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


def fresh_env(home: Path, tools: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if k.startswith(("PIP_", "UV_", "SSL_", "LANG", "LC_")) or k in ("TERM", "TMPDIR")}
    env = dict(keep, HOME=str(home), PATH=f"{tools}:{SYSTEM_PATH}", MEMHOOKS_OFFLINE="1",
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_STATE_HOME=str(home / ".local" / "state"))
    # The package index pip is configured with here, for uv too (uv does not read pip.conf).
    for key, uv_key in (("global.extra-index-url", "UV_EXTRA_INDEX_URL"), ("global.find-links", "UV_FIND_LINKS")):
        got = subprocess.run([sys.executable, "-m", "pip", "config", "get", key], capture_output=True, text=True)
        if got.returncode == 0 and got.stdout.strip() and uv_key not in env:
            env[uv_key] = got.stdout.strip()
    return env


@pytest.mark.parametrize("mode", ["uv", "pipx", "venv"])
def test_the_readme_line_works_on_a_fresh_home(mode, tools, tmp_path):
    if mode != "venv" and not (tools / mode).exists():
        pytest.skip(f"{mode} cannot be had here")
    home = tmp_path / "home"
    home.mkdir()
    repo = checkout(tmp_path / "memhooks")
    env = fresh_env(home, tools)
    if mode == "venv":
        env["PATH"] = f"{Path(sys.executable).parent.parent / 'bin'}:{SYSTEM_PATH}"
        env["PATH"] = SYSTEM_PATH if shutil.which("python3", path=SYSTEM_PATH) else env["PATH"]
    assert not (home / ".local" / "bin").exists()
    started = time.monotonic()
    r = subprocess.run(["bash", "-c", readme_lines()[mode]], cwd=repo, env=env, capture_output=True,
                       text=True, timeout=900, stdin=subprocess.DEVNULL)
    took = time.monotonic() - started
    print(f"\nREADME line ({mode}) on a fresh HOME: exit {r.returncode} in {took:.1f} s")
    if r.returncode != 0 and re.search(r"No solution found|Could not find a version|No matching distribution|"
                                       r"Failed to fetch|network", r.stderr + r.stdout, re.I):
        pytest.skip(f"{mode}: the package index cannot provide memhooks' dependencies here: {r.stderr[-400:]}")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "command not found" not in r.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    events = set(settings["hooks"])
    assert {"PostToolUse", "SessionStart"} <= events, events
    assert "memhooks" in json.loads((home / ".claude.json").read_text())["mcpServers"]
