"""The plugin as a user gets it, with the real Claude Code CLI: `claude plugin validate --strict`
passes (no warnings), `claude plugin marketplace add <checkout>` + `claude plugin install
memhooks@memhooks` install it, and the installed copy's hooks capture, its `bin/memhooks`
reads the plugin's store, and a real session runs its hooks and gives the agent `memhooks`."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin  # the shared fixture: the pinned CLI, installed once
REPO = harness.REPO_ROOT
COMMANDS = ("stats", "search", "doctor", "forget", "import-transcripts")


def checkout_copy(dest: Path) -> Path:
    """The checkout as git sees it (tracked and new files, nothing ignored): what a clone holds."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    return dest


def cli_env(home: Path) -> dict[str, str]:
    env = harness._base_env()
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), DISABLE_TELEMETRY="1",
               DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return env


def claude(claude_bin: Path, env: dict, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(claude_bin), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def serve_the_plugins_git_source(env: dict, checkout: Path) -> None:
    """The marketplace entry's git source, answered offline by `checkout` (made a git repo):
    git in the CLI's HOME rewrites the entry's URL to it."""
    url = json.loads((checkout / ".claude-plugin" / "marketplace.json").read_text())["plugins"][0]["source"]["url"]
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "checkout"]):
        subprocess.run([*git, *args], cwd=checkout, check=True, capture_output=True)
    with open(Path(env["HOME"]) / ".gitconfig", "a", encoding="utf-8") as fh:
        fh.write(f'[url "{checkout.as_uri()}"]\n\tinsteadOf = {url}\n')


def install_from_marketplace(claude_bin: Path, env: dict, checkout: Path) -> Path:
    """marketplace add + install; the installed copy's folder (from installed_plugins.json)."""
    serve_the_plugins_git_source(env, checkout)
    add = claude(claude_bin, env, "plugin", "marketplace", "add", str(checkout))
    assert add.returncode == 0, add.stdout + add.stderr
    inst = claude(claude_bin, env, "plugin", "install", "memhooks@memhooks")
    assert inst.returncode == 0, inst.stdout + inst.stderr
    plugins = Path(env.get("CLAUDE_CONFIG_DIR") or Path(env["HOME"]) / ".claude") / "plugins"
    record = json.loads((plugins / "installed_plugins.json").read_text())
    (entry,) = record["plugins"]["memhooks@memhooks"]
    root = Path(entry["installPath"])
    assert root.is_dir() and plugins / "cache" in root.parents, root
    return root


def journal_rows(data: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(data / "journal.db") as conn:
        return [(ev, json.loads(p).get("tool_use_id") or "") for ev, p in
                conn.execute("SELECT hook_event_name, payload FROM events ORDER BY id")]


def test_validate_strict_passes_without_warnings(claude_bin: Path, tmp_path: Path) -> None:
    checkout = checkout_copy(tmp_path / "memhooks")
    home = tmp_path / "home"
    home.mkdir()
    # The folder (its marketplace, and on newer CLIs the plugin in it too) and the plugin manifest.
    # `network.hosts` is what the newest CLI asks for; a CLI before it warns that the field is
    # unknown (and ignores it at load time): that one warning, and no other, is allowed there.
    for target in (checkout, checkout / ".claude-plugin" / "plugin.json"):
        r = claude(claude_bin, cli_env(home), "plugin", "validate", "--strict", str(target))
        out = r.stdout + r.stderr
        if r.returncode != 0 and "Unknown field 'network'" in out:
            r = claude(claude_bin, cli_env(home), "plugin", "validate", str(target))
            out = r.stdout + r.stderr
            assert out.count("❯ ") == 1 and "Found 1 warning" in out, out
            assert r.returncode == 0 and "Validation passed" in out, out
            continue
        if "refuses a plugin with files in its bin/ folder" in out:
            # The newest CLI warns that claude.ai's directory takes no bin/ folder; bin/ holds the
            # lc-cache-* commands Claude Code puts on the agent's PATH, which is what they are
            # for. That one warning, and no other, is allowed (the plugin still validates).
            r = claude(claude_bin, cli_env(home), "plugin", "validate", str(target))
            out = r.stdout + r.stderr
            assert "Found 1 warning" in out, out
            assert r.returncode == 0 and "Validation passed" in out, out
            continue
        assert r.returncode == 0 and "Validation passed" in out and "with warnings" not in out, out
        assert "Advice" not in out, out  # e.g. the README's marketplace install line is there
        if "Provides:" in out:  # newer CLIs list what the plugin provides
            for name in ("lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write", "memhooks", "memhooks-mcp"):
                assert f"bin: {name}\n" in out, out
            assert "python.sh" not in out  # helpers are not plugin commands


def test_marketplace_install_then_a_hook_of_the_installed_copy_captures(claude_bin: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = cli_env(home)
    root = install_from_marketplace(claude_bin, env, checkout_copy(tmp_path / "memhooks"))
    for name in COMMANDS:
        text = (root / "commands" / f"{name}.md").read_text()
        assert text.startswith("---\ndescription: ") and 'Bash(bash "${CLAUDE_PLUGIN_ROOT}/bin/memhooks":*)' in text
    assert (root / "lib" / "python.sh").is_file() and not (root / "bin" / "_python.sh").exists()

    data = Path(env["CLAUDE_CONFIG_DIR"]) / "plugins" / "data" / "memhooks-memhooks"  # as the CLI names it
    data.mkdir(parents=True)
    hook_env = dict(env, CLAUDE_PLUGIN_ROOT=str(root), CLAUDE_PLUGIN_DATA=str(data), CLAUDE_PROJECT_DIR=str(tmp_path),
                    MEMHOOKS_PYTHON=sys.executable, MEMHOOKS_OFFLINE="1")
    payload = {"session_id": "s-market", "transcript_path": "/tmp/t.jsonl", "cwd": str(tmp_path),
               "hook_event_name": "PostToolUse", "tool_name": "mcp__context7__query-docs",
               "tool_use_id": "toolu_market_1",
               "tool_input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"},
               "tool_response": [{"type": "text", "text": "### useEffect cleanup\n\nReturn a cleanup function "
                                                          "from the effect to unsubscribe.\n"}]}
    r = subprocess.run(["bash", str(root / "hooks" / "post-tool-use")], input=json.dumps(payload), text=True,
                       env=hook_env, cwd=tmp_path, capture_output=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert journal_rows(data) == [("PostToolUse", "toolu_market_1")]

    # The installed copy's `memhooks`, run from a terminal (no CLAUDE_PLUGIN_DATA, no MEMHOOKS_DB),
    # reads that store: it finds the plugin's data folder from where the CLI put the plugin.
    term = {k: v for k, v in env.items() if k != "CLAUDE_CONFIG_DIR"}
    term["MEMHOOKS_PYTHON"] = sys.executable
    r = subprocess.run(["bash", str(root / "bin" / "memhooks"), "search", "useEffect cleanup", "--json"],
                       env=term, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["results"]
    assert hits and hits[0]["library_id"] == "/facebook/react"
    # `memhooks install --allow` there writes only the plugin's permission rules.
    r = subprocess.run(["bash", str(root / "bin" / "memhooks"), "install", "--allow"], env=term, cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert "hooks" not in settings and "memhooks" not in settings.get("mcpServers", {})
    allow = settings["permissions"]["allow"]
    assert "mcp__plugin_memhooks_memhooks__search_documents" in allow
    assert f'Bash(bash "{root}/bin/lc-cache-lookup-docs" *)' in allow


def test_a_real_session_runs_the_installed_plugin(claude_bin: Path, tmp_path: Path) -> None:
    """`claude -p` with the marketplace-installed plugin (no --plugin-dir): its SessionStart and
    PostToolUse hooks capture into the data folder Claude Code gives it, and the agent can run
    the plugin's `memhooks` by name."""
    env = harness.E2EEnv(tmp_path / "w", claude_bin)
    env.extra_env["MEMHOOKS_DB"] = ""  # the plugin's own store, in CLAUDE_PLUGIN_DATA
    env.settings["permissions"]["allow"].append("Bash(memhooks stats:*)")
    env.write_settings()
    cli = env.env()  # HOME is the session's: the plugin goes to its ~/.claude/plugins
    cli.pop("ANTHROPIC_BASE_URL")
    root = install_from_marketplace(claude_bin, cli, checkout_copy(tmp_path / "memhooks"))
    script = [
        [{"name": "mcp__context7__query-docs", "input": {"libraryId": "/facebook/react", "query": "useEffect cleanup"}}],
        [{"name": "Bash", "input": {"command": "memhooks stats --json", "description": "memhooks stats"}}],
    ]
    r = env.run("How do I clean up a React effect?", script, plugin_dir=None)
    assert r.rc == 0 and not r.timed_out, r.describe()
    # The plugin's hooks ran (2.1.332 runs a local directory marketplace's plugin where the
    # marketplace is, not from the cache copy) and captured into its data folder:
    data = env.home / ".claude" / "plugins" / "data" / "memhooks-memhooks"
    rows = journal_rows(data)
    assert ("PostToolUse", "toolu_e2e_s0_0") in rows and rows[0][0] == "SessionStart", rows
    stats = r.tool_result_text("toolu_e2e_s1_0") or ""
    assert '"schema"' in stats and str(data / "memhooks.db") in stats, r.describe()
    assert os.path.isdir(root / "commands")
    # From a terminal (no CLAUDE_PLUGIN_DATA, no MEMHOOKS_DB) the checkout's bin/memhooks finds
    # that store too: the one memhooks data folder the CLI made.
    term = {k: v for k, v in cli.items() if not k.startswith(("MEMHOOKS_DB", "CLAUDE_"))}
    found = subprocess.run(["bash", str(tmp_path / "memhooks" / "bin" / "memhooks"), "search", "useEffect", "--json"],
                           env=term, cwd=env.project, capture_output=True, text=True, timeout=120)
    assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stdout + found.stderr


def test_slash_commands_run_the_plugins_memhooks(claude_bin: Path, tmp_path: Path) -> None:
    """`/memhooks:stats` and `/memhooks:doctor`: their `!` lines run bin/memhooks under the
    command's own allowed-tools (no prompt, in `claude -p`) and the output reaches the model."""
    env = harness.E2EEnv(tmp_path / "w", claude_bin)
    env.extra_env["MEMHOOKS_DB"] = ""
    cli = env.env()
    cli.pop("ANTHROPIC_BASE_URL")
    install_from_marketplace(claude_bin, cli, checkout_copy(tmp_path / "memhooks"))
    r = env.run("/memhooks:stats --json", [], plugin_dir=None)
    assert r.rc == 0 and not r.timed_out, r.describe()
    data = env.home / ".claude" / "plugins" / "data" / "memhooks-memhooks"
    assert r.any_request_contains('\\"schema\\"') or r.any_request_contains('"schema"'), r.describe()
    assert r.any_request_contains(str(data / "memhooks.db")), r.describe()
    r = env.run("/memhooks:doctor", [], plugin_dir=None)
    assert r.rc == 0 and r.any_request_contains("install:user"), r.describe()
