"""What every command module shares: one-line failures, opening the store, JSON output."""

from __future__ import annotations

import sqlite3
import sys

import click

from memhooks import config
from memhooks.cli.results import emit
from memhooks.config import db_path
from memhooks.ingest.pipeline import open_reader
from memhooks.recall.stats_render import next_steps_lines
from memhooks.setup.writable import read_only_reason
from memhooks.store.connect import connect
from memhooks.store.health import error_line


class Fail(click.ClickException):
    """One-line error, non-zero exit."""

    def show(self, file=None):
        click.echo(f"memhooks: {self.format_message()}", err=True)


def store_error_line(exc) -> str:
    """One line for a store SQLite cannot use: a read-only folder or file is named as such
    (it is not damaged), anything else is worded by memhooks.store.health."""
    why = read_only_reason(db_path())
    if why is not None:
        return f"memhooks: cannot open the store at {db_path()}: {why}"
    return error_line(exc)


def store_exists() -> bool:
    return config.store_exists()


def no_store(as_json: bool = False, json_extra: dict | None = None, *, what: str = "") -> None:
    """For a read command on a machine without a store: say so, touch nothing, and exit:
    0 for people, 1 for --json callers (who need to tell "no store" from "nothing found")."""
    path = db_path()
    if as_json:
        echo_json("no-store", {**(json_extra or {}), "store": None, "error": "no-store", "db": path})
        sys.exit(1)

    click.echo(f"No memhooks store yet at {path}: nothing has been captured{what}. Next:")
    for line in next_steps_lines():
        click.echo(line)
    sys.exit(0)


def open_store(ingest: bool = True):
    """Open the store; readers (ingest=True) project pending events first."""
    path = db_path()
    try:
        if ingest:
            return open_reader(path)
        return connect(path)
    except sqlite3.DatabaseError as exc:
        raise Fail(store_error_line(exc).removeprefix("memhooks: ")) from None
    except (sqlite3.Error, OSError) as exc:
        why = read_only_reason(path)
        raise Fail(f"cannot open the store at {path}: {why or exc}") from None


def echo_json(kind: str, data) -> None:
    """Print a `--json` result of `kind` through the one renderer (memhooks.cli.results)."""
    emit(kind, data)


def echo_lines(out=(), err=()) -> None:
    """Print rendered lines: `out` on stdout, then `err` on stderr."""
    for line in out:
        click.echo(line)
    for line in err:
        click.echo(line, err=True)
