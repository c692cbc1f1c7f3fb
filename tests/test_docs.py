"""Every command has help and a row in the README's command table (walked from the click
tree, so a new command without either fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from memhooks.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))


COMMANDS = list(_commands(main))


def _table() -> tuple[set[str], dict[str, set[str]]]:
    """The README's command table: the commands its first column names, and for each the
    words after it (a group's subcommands, `a\\|b\\|c`)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Commands\n"):]
    section = section[:section.index("\n## ", 1)]
    names: set[str] = set()
    subs: dict[str, set[str]] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first = re.split(r"(?<!\\) \| ", line[2:], maxsplit=1)[0]
        for span in re.findall(r"`([^`]+)`", first):
            words = span.split()
            if words[0] == "memhooks":
                words = words[1:]
            if not words:
                continue
            names.add(words[0])
            if len(words) > 1:
                subs.setdefault(words[0], set()).update(words[1].split("\\|"))
    return names, subs


def test_the_tree_is_walked():
    paths = {" ".join(p) for p, _ in COMMANDS}
    assert {"forget", "cache lookup", "team push", "hook session-start"} <= paths


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_help(path, cmd):
    assert (cmd.help or cmd.short_help or "").strip(), f"`memhooks {' '.join(path)}` has no help"
    text = cmd.get_help(click.Context(cmd, info_name=" ".join(("memhooks", *path))))
    assert f"memhooks {' '.join(path)}" in text


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_is_in_the_readme_table(path, cmd):
    names, subs = _table()
    assert path[0] in names, f"`memhooks {path[0]}` is missing from the README's command table"
    if len(path) > 1:
        assert path[1] in subs.get(path[0], set()), (
            f"`memhooks {' '.join(path)}` is missing from the README's `{path[0]}` row")


def test_the_table_names_no_command_that_is_gone():
    names, _ = _table()
    top = {p[0] for p, _ in COMMANDS}
    assert names <= top, f"the README names commands memhooks does not have: {names - top}"
