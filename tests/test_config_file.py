"""The settings file beside the store (`memhooks config path|get|set|unset|list`): the environment
wins, every setting reader sees the file, and the hot paths read it without tomllib."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import BIN, load_payload, plugin_env, run, run_hook


def cli(*args, env=None, check=True):
    r = run([sys.executable, "-m", "memhooks.cli.main", *args], env=env)
    if check:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def test_path_set_get_list_unset(store, monkeypatch):
    path = Path(cli("config", "path").stdout.decode().strip())
    assert path == store.parent / "config.toml" and not path.exists()
    assert cli("config", "get", "tier2_ttl_s").stdout.decode().strip() == "14400"
    cli("config", "set", "tier2_ttl_s", "60")
    cli("config", "set", "MEMHOOKS_SERVE_WEBFETCH", "off")  # the variable's name works too
    cli("config", "set", "max-size", "500MB")
    cli("config", "set", "exclude", os.pathsep.join(["~/secret", "/work/client-*"]))
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert tomllib.loads(path.read_text()) == {
        "tier2_ttl_s": 60, "serve_webfetch": False, "max_size": "500MB",
        "exclude": ["~/secret", "/work/client-*"]}
    assert cli("config", "get", "tier2_ttl_s").stdout.decode().strip() == "60"
    listing = json.loads(cli("config", "list", "--json").stdout)
    rows = {r["key"]: r for r in listing["settings"]}
    assert (rows["tier2_ttl_s"]["value"], rows["tier2_ttl_s"]["from"]) == ("60", "file")
    assert rows["serve_webfetch"]["value"] == "off" and rows["top_n"]["from"] == "default"
    # The environment wins, and `set` says so.
    monkeypatch.setenv("MEMHOOKS_TIER2_TTL_S", "7")
    assert cli("config", "get", "tier2_ttl_s").stdout.decode().strip() == "7"
    assert "wins over the file" in cli("config", "set", "tier2_ttl_s", "90").stderr.decode()
    monkeypatch.delenv("MEMHOOKS_TIER2_TTL_S")
    cli("config", "unset", "tier2_ttl_s")
    assert cli("config", "get", "tier2_ttl_s").stdout.decode().strip() == "14400"
    # Bad input: one line, exit 2, the file untouched.
    before = path.read_bytes()
    for args in (("set", "nope", "1"), ("set", "max_size", "huge"), ("set", "serve", "maybe"),
                 ("set", "tier1_ttl_s", "-5"), ("get", "nope")):
        r = cli("config", *args, check=False)
        assert r.returncode == 2 and len(r.stderr.decode().strip().splitlines()) == 1, args
    assert path.read_bytes() == before


def test_every_reader_sees_the_file(store, monkeypatch):
    from memhooks import config

    monkeypatch.delenv("MEMHOOKS_OFFLINE")
    assert config.tier2_ttl_s() == 4 * 3600 and not config.offline()
    cli("config", "set", "tier2_ttl_s", "123")
    cli("config", "set", "offline", "on")
    cli("config", "set", "top_n", "7")
    assert (config.tier2_ttl_s(), config.offline(), config.top_n()) == (123, True, 7)
    monkeypatch.setenv("MEMHOOKS_TOP_N", "3")
    assert config.top_n() == 3
    assert config.setting("MEMHOOKS_EXCLUDE") is None


def test_a_serve_switch_in_the_file_turns_serving_off(store, monkeypatch):
    monkeypatch.setenv("MEMHOOKS_NO_SPAWN", "1")
    page = load_payload("webfetch")
    assert run_hook("post-tool-use", page).returncode == 0
    from conftest import ingest

    ingest(store)
    pre = {k: v for k, v in page.items() if k != "tool_response"} | {"hook_event_name": "PreToolUse"}
    assert b"permissionDecision" in run_hook("pre-tool-use", pre).stdout
    cli("config", "set", "serve_webfetch", "off")
    assert run_hook("pre-tool-use", pre | {"session_id": "x"}).stdout == b""
    cli("config", "set", "serve_webfetch", "on")
    cli("config", "set", "serve", "off")
    assert run_hook("pre-tool-use", pre | {"session_id": "y"}).stdout == b""


def test_a_broken_file_is_ignored_by_the_hooks_and_reported_by_the_cli(store):
    path = Path(cli("config", "path").stdout.decode().strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("tier2_ttl_s = [unclosed\n")
    assert run([BIN / "lc-cache-write", "tier1", "react", "/facebook/react"]).returncode == 0
    assert run([BIN / "lc-cache-lookup", "react"]).stdout == b"/facebook/react\n"
    r = cli("config", "list", check=False)
    assert r.returncode == 1 and "cannot read the settings file" in r.stderr.decode()
    assert "settings file ignored" in (store.parent / "memhooks.log").read_text()


@pytest.mark.parametrize("value", [
    "plain", 'quo"te', "back\\slash", "new\nline\ttab", "ünïcødé ✓", "\x01\x7f", "", "#not a comment",
    0, -12, 1.5, True, False, ["a", "b;c", 'd"e'], [],
])
def test_the_flat_reader_and_writer_agree_with_tomllib(value):
    from memhooks.config_file import dumps, loads_flat

    text = dumps({"k": value})
    assert tomllib.loads(text) == {"k": value}
    assert loads_flat(text) == {"k": value}


def test_anything_beyond_flat_lines_goes_to_tomllib(tmp_path):
    from memhooks.config_file import load, loads_flat

    text = 'top_n = 5\n[table]\nx = 1\n'
    assert loads_flat(text) is None
    path = tmp_path / "c.toml"
    path.write_text(text)
    assert load(str(path)) == {"top_n": 5, "table": {"x": 1}}
    path.write_text("a = 1\na = 2\n")
    with pytest.raises(ValueError):
        load(str(path))


def test_the_hot_paths_read_the_file_without_tomllib(tmp_path):
    env = plugin_env(tmp_path)
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    (data / "python.marker").write_text(f"hot={sys.executable}\nfull={sys.executable}\nstamp=\n")
    (data / "config.toml").write_text('# mine\ntier2_ttl_s = 600\nexclude = ["/nowhere/*"]\nserve = true\n')
    for args in (["lc-cache-write", "tier1", "react", "/facebook/react"], ["lc-cache-lookup", "react"],
                 ["lc-cache-lookup", "vue"]):
        r = subprocess_run(["bash", str(BIN / args[0]), *args[1:]], env)
        assert r.returncode == 0
    lines = (tmp_path / "trace").read_text().splitlines()
    lookups = [line.split(" ")[1:] for line in lines if line.startswith("lc-cache-lookup ")]
    assert len(lookups) == 2
    for mods in lookups:
        assert "memhooks.config_file" in mods  # the file was read...
        assert "tomllib" not in mods  # ... by string methods


def subprocess_run(argv, env):
    import subprocess

    return subprocess.run(argv, env=env, capture_output=True, timeout=60, check=False)
