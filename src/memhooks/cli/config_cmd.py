"""`memhooks config path|get|set|unset|list`: the settings file beside the store (in the spirit
of `llm keys path`). The environment still wins: `list` and `get` say where a value comes
from."""

from __future__ import annotations

import os

import click

from memhooks.cli._common import Fail
from memhooks.cli.results import emit
from memhooks.config import config_path
from memhooks.config_file import SETTINGS, coerce, env_name, load, save
from memhooks.doc_sources import CONFIG_KEY


def register(main: click.Group) -> None:
    main.add_command(config_group)


def _path() -> str:
    return config_path()


def _read() -> dict:
    try:
        return load(_path())
    except (OSError, ValueError) as exc:
        raise Fail(f"cannot read the settings file: {exc}") from None


def _known(key: str) -> str:
    key = key.strip().lower().replace("-", "_")
    if key.startswith("memhooks_"):
        key = key[len("memhooks_"):]
    if key not in SETTINGS:
        raise click.BadParameter(f"unknown setting {key!r}; `memhooks config list` shows them")
    return key


def _shown(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return os.pathsep.join(str(v) for v in value)
    return str(value)


def _effective(key: str, values: dict) -> tuple[str, str]:
    """(value as text, where it comes from: env, file or default)."""
    env = os.environ.get(env_name(key), "")
    if env.strip():
        return env, "env"
    if key in values:
        return _shown(values[key]), "file"
    return SETTINGS[key][1], "default"


@click.group("config")
def config_group():
    """The settings file beside the store (config.toml); MEMHOOKS_* variables win over it."""


@config_group.command("path")
def config_path_cmd():
    """Print where the settings file is (it need not exist yet)."""
    click.echo(_path())


@config_group.command("list")
@click.option("--json", "as_json", is_flag=True)
def config_list(as_json):
    """Every setting: its value, where it comes from (env, file, default), what it does."""
    values = _read()
    rows = []
    for key, (kind, _default, what) in SETTINGS.items():
        value, origin = _effective(key, values)
        rows.append({"key": key, "value": value, "from": origin, "env": env_name(key),
                     "kind": kind, "about": what})
    unknown = sorted(set(values) - set(SETTINGS) - {CONFIG_KEY})  # docs sources: `memhooks doctor`
    if as_json:
        emit("config list", {"path": _path(), "settings": rows, "unknown": unknown})
        return
    width = max(len(r["key"]) for r in rows)
    for r in rows:
        shown = r["value"] if r["value"] != "" else "(none)"
        click.echo(f"{r['key']:<{width}}  {shown}  [{r['from']}]  {r['about']}")
    for key in unknown:
        click.echo(f"{key:<{width}}  {_shown(values[key])}  [file, not a memhooks setting]")


@config_group.command("get")
@click.argument("key")
def config_get(key):
    """Print one setting's value in effect (the environment's, else the file's, else the
    default)."""
    key = _known(key)
    click.echo(_effective(key, _read())[0])


@config_group.command("set")
@click.argument("key")
@click.argument("value")
def config_set(key, value):
    """Write KEY = VALUE to the settings file (exclude: folders separated like PATH)."""
    key = _known(key)
    values = _read()
    try:
        values[key] = coerce(key, value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    save(_path(), values)
    click.echo(f"{key} = {_shown(values[key])}  ({_path()})")
    if os.environ.get(env_name(key), "").strip():
        click.echo(f"memhooks: {env_name(key)} is set and wins over the file", err=True)


@config_group.command("unset")
@click.argument("key")
def config_unset(key):
    """Remove KEY from the settings file (its default applies again)."""
    key = _known(key)
    values = _read()
    if values.pop(key, None) is None:
        click.echo(f"{key} was not set in {_path()}")
        return
    save(_path(), values)
    click.echo(f"{key} removed from {_path()}")
