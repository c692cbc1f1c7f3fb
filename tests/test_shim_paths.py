"""The shims (POSIX sh, run by sh and by bash alike) read path settings exactly as memhooks.config does: `~` (and `~user`) is
expanded, a relative CLAUDE_PLUGIN_DATA / MEMHOOKS_DB / XDG_DATA_HOME is ignored, and a
relative MEMHOOKS_PYTHON is never run. Every hook and every bin shim runs as a subprocess
from inside a project folder (the hook's cwd); nothing is ever created in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.version  # runs on every supported Python in CI

ROOT = Path(__file__).resolve().parent.parent

PAYLOAD = {"session_id": "s-paths", "transcript_path": "/tmp/t.jsonl", "tool_use_id": "toolu_paths_1",
           "tool_name": "mcp__context7__query-docs",
           "tool_input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"},
           "tool_response": [{"type": "text", "text": "### useEffect cleanup\n\nReturn a cleanup function."}]}

# (shim, arguments, stdin): each hook and each bin shim
SHIMS: list[tuple[str, tuple[str, ...], dict | str | None]] = [
    ("hooks/session-start", (), {"hook_event_name": "SessionStart", "source": "startup"}),
    ("hooks/post-tool-use", (), {**PAYLOAD, "hook_event_name": "PostToolUse"}),
    ("hooks/pre-tool-use", (), {**{k: v for k, v in PAYLOAD.items() if k != "tool_response"},
                                "hook_event_name": "PreToolUse"}),
    ("bin/lc-cache-write", ("tier1", "react", "/facebook/react"), None),
    ("bin/lc-cache-lookup", ("react",), None),
    ("bin/lc-cache-lookup-docs", ("/facebook/react", "useEffect cleanup"), None),
    ("bin/memhooks-mcp", (), ""),
]


def python_launcher(path: Path) -> Path:
    """An executable that runs this test's python (which has the dependencies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    path.chmod(0o755)
    return path


SHELLS = [sh for sh in ("/bin/sh", "/bin/bash") if os.path.exists(sh)]


@pytest.fixture(params=SHELLS)
def world(tmp_path, request):
    """A HOME, a project folder (the cwd of every run) holding a hostile `venv/bin/python` and
    `python3`, and a PATH whose python3 has the dependencies."""
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    (project / "venv" / "bin").mkdir(parents=True)
    (project / "package.json").write_text(json.dumps({"dependencies": {"react": "^18.3.1"}}))
    ran = tmp_path / "hostile-python-ran"
    for hostile in (project / "venv" / "bin" / "python", project / "python3"):
        hostile.write_text(f"#!/bin/sh\ntouch '{ran}'\nexec \"{sys.executable}\" \"$@\"\n")
        hostile.chmod(0o755)
    bindir = tmp_path / "bin"
    python_launcher(bindir / "python3")
    for tool in ("bash", "sh", "cat", "mkdir"):
        (bindir / tool).symlink_to(f"/bin/{tool}" if os.path.exists(f"/bin/{tool}") else f"/usr/bin/{tool}")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE_", "MEMHOOKS_", "PYTHON", "VIRTUAL_ENV", "XDG_"))}
    env.update(PATH=str(bindir), HOME=str(home), CLAUDE_PROJECT_DIR=str(project), MEMHOOKS_OFFLINE="1",
               MEMHOOKS_NO_SPAWN="1", MEMHOOKS_VENV_WAIT_S="0")
    return {"home": home, "project": project, "env": env, "ran": ran, "tmp": tmp_path,
            "shell": request.param}


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def run_all(world, **settings) -> None:
    env = dict(world["env"], **settings)
    for shim, args, stdin in SHIMS:
        data = json.dumps({**stdin, "cwd": str(world["project"])}) if isinstance(stdin, dict) else (stdin or "")
        shell = "/bin/bash" if shim == "bin/memhooks-mcp" else world["shell"]  # (a bash script)
        proc = subprocess.run([shell, str(ROOT / shim), *args], input=data, text=True, env=env,
                              capture_output=True, timeout=120, cwd=world["project"])
        if shim == "bin/memhooks-mcp":
            assert proc.returncode in (0, 1), proc.stderr  # no client: the server ends at EOF
        else:
            assert proc.returncode == 0, (shim, proc.stderr)
        if shim.startswith("hooks/"):
            assert proc.stderr == "", (shim, proc.stderr)


@pytest.mark.parametrize("settings", [
    {"MEMHOOKS_DB": "relative/path.db", "CLAUDE_PLUGIN_DATA": "rel"},
    {"MEMHOOKS_DB": "./memhooks.db"},
    {"CLAUDE_PLUGIN_DATA": "data", "XDG_DATA_HOME": "xdg"},
    {"MEMHOOKS_DB": "memhooks.db", "CLAUDE_PLUGIN_DATA": "  ", "MEMHOOKS_PYTHON": "venv/bin/python"},
    {"MEMHOOKS_PYTHON": "python3"},  # a bare name: looked up on PATH, never in the project
], ids=["both-relative", "dot-relative", "plugin-data-and-xdg-relative", "bare-db-relative-python",
        "python-by-name"])
def test_relative_settings_create_nothing_in_the_project(world, settings):
    before = tree(world["project"])
    run_all(world, **settings)
    assert tree(world["project"]) == before
    assert not world["ran"].exists()  # the project's own python was never run
    # the default location (HOME's data dir) holds the store and the shims' state
    data = world["home"] / ".local" / "share" / "memhooks"
    assert (data / "journal.db").is_file() and (data / "memhooks.db").is_file()
    if settings.get("MEMHOOKS_PYTHON") != "python3":  # (a usable MEMHOOKS_PYTHON needs no state)
        assert (data / "python.marker").is_file() or (data / "hot.python").is_file()


def test_tilde_forms_land_under_home(world):
    before = tree(world["project"])
    launcher = python_launcher(world["home"] / "py" / "python3")
    run_all(world, MEMHOOKS_DB="~/stores/memhooks.db", MEMHOOKS_PYTHON="~/py/python3")
    assert tree(world["project"]) == before
    stores = world["home"] / "stores"
    assert (stores / "memhooks.db").is_file() and (stores / "journal.db").is_file()
    assert not (world["project"] / "~").exists() and not Path("~").exists()
    rows = subprocess.run([sys.executable, "-c",
                           "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]);"
                           "print(c.execute('select count(*) from events').fetchone()[0])",
                           str(stores / "journal.db")], capture_output=True, text=True)
    assert int(rows.stdout) >= 2  # SessionStart and PostToolUse journaled there
    assert launcher.is_file()


def test_tilde_plugin_data_is_the_state_and_the_store(world):
    before = tree(world["project"])
    env_file = world["tmp"] / "session.env"
    run_all(world, CLAUDE_PLUGIN_DATA="~/plugin-data", CLAUDE_ENV_FILE=str(env_file))
    assert tree(world["project"]) == before
    data = world["home"] / "plugin-data"
    assert (data / "memhooks.db").is_file() and (data / "journal.db").is_file()
    assert (data / "python.marker").is_file() or (data / "hot.python").is_file()
    # the lookups the agent runs through Bash get the same store, as an absolute path
    assert f"export MEMHOOKS_DB='{data}/memhooks.db'" in env_file.read_text()


def test_a_relative_memhooks_db_in_the_env_file_is_replaced(world):
    env_file = world["tmp"] / "session.env"
    data = world["tmp"] / "pd"
    run_all(world, CLAUDE_PLUGIN_DATA=str(data), MEMHOOKS_DB="rel.db", CLAUDE_ENV_FILE=str(env_file))
    assert f"export MEMHOOKS_DB='{data}/memhooks.db'" in env_file.read_text()
    assert not (world["project"] / "rel.db").exists()


def test_shim_and_python_agree_on_the_state_folder(world):
    """lib/python.sh's MEMHOOKS_STATE and memhooks.bootstrap.default_state_dir() are the same
    folder for every form of the settings."""
    home = str(world["home"])
    cases = [
        {},
        {"XDG_DATA_HOME": "rel"},
        {"XDG_DATA_HOME": "~/xdg"},
        {"XDG_DATA_HOME": " /abs/xdg "},
        {"MEMHOOKS_DB": "~/a/memhooks.db"},
        {"MEMHOOKS_DB": "rel/memhooks.db", "CLAUDE_PLUGIN_DATA": "~"},
        {"MEMHOOKS_DB": "/memhooks.db"},
        {"CLAUDE_PLUGIN_DATA": " ~/pd ", "MEMHOOKS_DB": "/x/y.db"},
        {"CLAUDE_PLUGIN_DATA": "~root/pd"},
        {"CLAUDE_PLUGIN_DATA": "~no-such-user-here/pd"},
    ]
    probe = (f'_mh_d="{ROOT}/bin"; . "{ROOT}/lib/python.sh"; printf "%s" "$MEMHOOKS_STATE"')
    py = ("import sys; sys.path.insert(0, sys.argv[1]); import bootstrap;"
          " print(bootstrap.default_state_dir(), end='')")
    for case in cases:
        env = dict(world["env"], **case)
        shim = subprocess.run([world["shell"], "-c", probe], env=env, capture_output=True, text=True,
                              cwd=world["project"]).stdout
        python = subprocess.run([sys.executable, "-I", "-S", "-c", py, str(ROOT / "src" / "memhooks")],
                                env=env, capture_output=True, text=True, cwd=world["project"]).stdout
        assert os.path.isabs(shim) and os.path.normpath(shim) == python, (case, shim, python)
        if "~" in json.dumps(case) and "no-such-user" not in json.dumps(case) and "~root" not in json.dumps(case):
            assert shim.startswith(home), (case, shim)


def test_config_reads_the_same_forms(world, monkeypatch):
    from memhooks import config

    for key in ("MEMHOOKS_DB", "CLAUDE_PLUGIN_DATA", "XDG_DATA_HOME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(world["home"]))
    monkeypatch.chdir(world["project"])
    monkeypatch.setenv("XDG_DATA_HOME", "rel")
    assert config.user_data_dir() == str(world["home"] / ".local" / "share" / "memhooks")
    monkeypatch.setenv("XDG_DATA_HOME", "~/xdg")
    assert config.user_data_dir() == str(world["home"] / "xdg" / "memhooks")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", "~/pd")
    assert config.db_path() == str(world["home"] / "pd" / "memhooks.db")
    monkeypatch.setenv("MEMHOOKS_DB", "rel.db")
    assert config.db_path() == str(world["home"] / "pd" / "memhooks.db")


def test_a_store_folder_with_quotes_reaches_the_env_file_quoted(world):
    env_file = world["tmp"] / "session.env"
    data = world["tmp"] / "it's \"pd\" $HOME `x`"
    run_all(world, CLAUDE_PLUGIN_DATA=str(data), CLAUDE_ENV_FILE=str(env_file))
    read = subprocess.run([world["shell"], "-c", '. "$1"; printf "%s" "$MEMHOOKS_DB"', "-", str(env_file)],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert read.stdout == f"{data}/memhooks.db", (env_file.read_text(), read.stdout)
    assert (data / "memhooks.db").is_file()
