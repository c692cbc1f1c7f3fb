"""Every `--json` output matches its typed result (memhooks.cli.results), run as the real CLI
(pipx's test_result_contract in spirit): each command with a --json option has a model, and
what it prints validates against it."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from memhooks.cli.main import main as cli
from memhooks.cli.results import LISTS, MODELS, check


def _json_commands(group: click.Group, prefix: str = "") -> list[str]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        path = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            out += _json_commands(cmd, path + " ")
        elif any("--json" in p.opts for p in cmd.params if isinstance(p, click.Option)):
            out.append(path)
    return out


def test_every_json_command_has_a_model():
    commands = _json_commands(cli)
    assert "stats" in commands and "cache lookup" in commands  # the walk finds them
    assert [c for c in commands if c not in MODELS and c not in LISTS] == []


def _cli(*args, env=None, ok=(0, 1)):
    proc = subprocess.run([sys.executable, "-m", "memhooks.cli.main", *args], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode in ok, proc.stderr
    return json.loads(proc.stdout)


def test_each_json_output_validates_against_its_model(store, tmp_path):
    project = tmp_path / "project"
    (project / "package.json").write_text('{"dependencies": {"react": "18.2.0"}}')
    body = tmp_path / "body.md"
    body.write_text("### Hooks\n\nuseState keeps state between renders of a component.\n")
    # before any store: the no-store answer
    assert check("no-store", _cli("search", "--json", "useState"))["error"] == "no-store"
    runs = {
        "cache write": _cli("cache", "write", "--json", "tier1", "react", "/facebook/react"),
        "cache lookup": _cli("cache", "lookup", "--json", "react"),
        "cache lookup-docs": _cli("cache", "lookup-docs", "--json", "/facebook/react", "nothing"),
        "search": _cli("search", "--json", "useState"),
        "stats": _cli("stats", "--json"),
        "scan": _cli("scan", "--json", str(project)),
        "warm": _cli("warm", "--json", str(project)),
        "doctor": _cli("doctor", "--json"),
        "team status": _cli("team", "status", "--json", "--offline"),
        "import-transcripts": _cli("import-transcripts", "--json", "--dry-run", str(tmp_path / "none")),
    }
    _cli("cache", "write", "--json", "tier2", "/facebook/react", "hooks", str(body))
    runs["show"] = _cli("show", "--json", str(runs["search"]["results"][0]["id"]) if runs["search"]["results"]
                        else "1")
    export = tmp_path / "export.jsonl"
    export.write_text(subprocess.run([sys.executable, "-m", "memhooks.cli.main", "export"],
                                     capture_output=True, text=True, timeout=60).stdout)
    runs["import"] = _cli("import", "--json", str(export))
    runs["config list"] = _cli("config", "list", "--json")
    runs["forget"] = _cli("forget", "--json", "--dry-run", "--library", "/facebook/react")
    for kind, data in runs.items():
        check(kind, data)
    assert runs["cache lookup"]["hit"] and runs["cache lookup"]["library_id"] == "/facebook/react"
    assert runs["import"]["existing"]["tier1"] == 1


@pytest.mark.parametrize("kind,data", [
    ("cache lookup", {"name": "react", "hit": True, "library_id": "/facebook/react", "surprise": 1}),
    ("cache write", {"written": True, "tier": "tier1"}),
    ("import", {"read": -1, "added": {}, "existing": {}, "rejected": 0, "errors": []}),
    ("doctor", [{"name": "store", "status": "ok"}]),
])
def test_a_drifted_output_fails_its_contract(kind, data):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        check(kind, data)
