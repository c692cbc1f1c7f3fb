"""`memhooks replay`, `reindex` and `ingest`: feed the journal and project it."""

from __future__ import annotations

import json
from contextlib import closing

import click

from memhooks.capture.replay import replay_file
from memhooks.cli._common import Fail, open_store
from memhooks.config import db_path
from memhooks.ingest.pipeline import ingest_pending
from memhooks.ingest.pipeline import reindex as do_reindex


def register(main: click.Group) -> None:
    for cmd in (replay, reindex, ingest):
        main.add_command(cmd)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
def replay(file):
    """Feed recorded hook payloads (JSON Lines) through the capture path."""
    try:
        if file != "-":
            _check_payloads(file)
        report = replay_file(file)
    except OSError as exc:
        raise Fail(f"cannot read {file}: {exc.strerror or exc}") from None
    if report["events"] and report["failed"] == report["events"]:
        raise Fail(f"none of the {report['events']} lines of {file} is a hook payload "
                   "that could be captured (each was journaled as failed)")
    click.echo(f"replayed {report['events']} events: {report['done']} captured, "
               f"{report['skipped']} skipped, {report['failed']} failed; "
               f"{report['documents_created']} new documents")


def _check_payloads(file: str) -> None:
    """Fail, before anything is journaled, on a file with no line that is a JSON object
    (an empty file, a binary file, plain text): it holds no hook payloads."""
    lines = 0
    with open(file, "rb") as fh:
        for line in fh:
            if not line.strip():
                continue
            lines += 1
            try:
                if isinstance(json.loads(line), dict):
                    return
            except (ValueError, RecursionError):
                continue
    what = ("is empty" if not lines else "has no hook payloads (" + (
        f"none of its {lines} lines is" if lines > 1 else "its one line is not") + " a JSON object)")
    raise Fail(f"{file} {what}: replay reads JSON Lines, one recorded hook payload a line")


@click.command()
def reindex():
    """Rebuild every projection from the journal."""
    with closing(open_store(ingest=False)) as conn:
        report = do_reindex(conn, db_path())
    click.echo(f"reindexed: {report.done} captured, {report.skipped} skipped, "
               f"{report.failed} failed; {report.documents_created} documents"
               + _refused(report))


def _refused(report) -> str:
    """`; N rows refused by admission` when there were any (memhooks.store.admission)."""
    n = sum(report.refused.values())
    return f"; {n} rows refused by admission" if n else ""


@click.command()
def ingest():
    """Project pending journal events now."""
    with closing(open_store(ingest=False)) as conn:
        report = ingest_pending(conn, db_path())
    click.echo(f"ingested: {report.done} captured, {report.skipped} skipped, {report.failed} failed"
               + _refused(report))
