"""`memhooks replay`, `reindex` and `ingest`: feed the journal and project it."""

from __future__ import annotations

from contextlib import closing

import click

from memhooks.cli._common import Fail, open_store
from memhooks.config import db_path


def register(main: click.Group) -> None:
    for cmd in (replay, reindex, ingest):
        main.add_command(cmd)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
def replay(file):
    """Feed recorded hook payloads (JSON Lines) through the capture path."""
    # lazy: each command's library code loads in that command only (CLI start-up)
    from memhooks.capture.replay import replay_file

    try:
        report = replay_file(file)
    except OSError as exc:
        raise Fail(f"cannot read {file}: {exc.strerror or exc}") from None
    click.echo(f"replayed {report['events']} events: {report['done']} captured, "
               f"{report['skipped']} skipped, {report['failed']} failed; "
               f"{report['documents_created']} new documents")


@click.command()
def reindex():
    """Rebuild every projection from the journal."""
    from memhooks.ingest.pipeline import reindex as do_reindex

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
    from memhooks.ingest.pipeline import ingest_pending

    with closing(open_store(ingest=False)) as conn:
        report = ingest_pending(conn, db_path())
    click.echo(f"ingested: {report.done} captured, {report.skipped} skipped, {report.failed} failed"
               + _refused(report))
