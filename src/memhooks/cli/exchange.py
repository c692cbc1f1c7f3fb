"""`memhooks export` and `memhooks import`: the store's knowledge as JSON Lines."""

from __future__ import annotations

import sys

import click

from memhooks.cli._common import Fail, echo_json, open_store, store_exists
from memhooks.store.exchange import export_lines, import_lines


def register(main: click.Group) -> None:
    for cmd in (export_cmd, import_cmd):
        main.add_command(cmd)


@click.command("export")
@click.option("-o", "--output", type=click.File("w", encoding="utf-8"), default="-",
              help="Write to this file (default: stdout).")
def export_cmd(output):
    """Write documents, libraries and tier1 entries as JSON Lines."""
    if not store_exists():
        click.echo("memhooks: no store yet: nothing to export", err=True)
        return
    conn = open_store()
    try:
        count = 0
        for line in export_lines(conn):
            output.write(line + "\n")
            count += 1
    finally:
        conn.close()
    if output is not sys.stdout:
        click.echo(f"exported {count} records", err=True)


@click.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8", errors="replace"), default="-")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def import_cmd(source, as_json):
    """Read JSON Lines written by `memhooks export` (a file or stdin) into the store."""
    conn = open_store(ingest=False)
    try:
        result = import_lines(conn, source)
    finally:
        conn.close()
    if as_json:
        echo_json("import", {"read": result.read, "added": result.added, "existing": result.existing,
                   "rejected": result.rejected, "errors": result.errors})
    else:
        added = ", ".join(f"{n} {t}" for t, n in result.added.items())
        click.echo(f"imported {result.read} records: added {added}; "
                   f"{sum(result.existing.values())} already present, {result.rejected} rejected")
        for number, reason in result.errors:
            click.echo(f"  line {number}: {reason}", err=True)
    if result.read and result.rejected == result.read:
        raise Fail("no record could be imported")
