"""`memhooks prune` and `memhooks vacuum`: keep the store small (memhooks.store.prune and
memhooks.store.vacuum do the work; both wait for a running ingester first)."""

from __future__ import annotations

import click

from memhooks import config_file
from memhooks.cli._common import Fail, no_store, store_exists
from memhooks.config import db_path, parse_size, project_dir
from memhooks.store.prune import ingest_lock, prune_store, report_lines
from memhooks.store.vacuum import vacuum as do_vacuum
from memhooks.termtext import human_bytes


def register(main: click.Group) -> None:
    for cmd in (prune, vacuum):
        main.add_command(cmd)


def parse_duration(text: str) -> float | None:
    """Seconds from `90s`, `30m`, `12h`, `30d`, `2w` (a bare number is days); None otherwise."""
    try:
        return config_file.parse_duration(text, bare_unit_s=86400, allow_zero=True)
    except ValueError:
        return None


@click.command()
@click.option("--older-than", "older_than", metavar="DUR",
              help="Documents not read nor captured for this long (30d, 12h, 2w; a number is days).")
@click.option("--max-size", "max_size", metavar="SIZE",
              help="Evict until the store's files fit (500MB, 1GiB). Default: the cap "
                   "(MEMHOOKS_MAX_SIZE, 1 GiB) when --older-than is not given.")
@click.option("--dry-run", is_flag=True, help="Say what would go; change nothing.")
def prune(older_than, max_size, dry_run):
    """Evict documents: least recently read first (never read first), then the oldest;
    documents read in the last 7 days after every other, the pinned versions of your
    current projects last. With the cap, stops as soon as the store's folder fits."""
    age = None
    if older_than is not None:
        age = parse_duration(older_than)
        if age is None:
            raise click.BadParameter(f"not a duration: {older_than!r} (try 30d, 12h, 2w)",
                                     param_hint="--older-than")
    cap = None
    if max_size is not None:
        cap = parse_size(max_size)
        if cap is None:
            raise click.BadParameter(f"not a size: {max_size!r} (try 500MB, 1GiB)",
                                     param_hint="--max-size")
    if not store_exists():
        no_store(what="")
    try:
        report = prune_store(db_path(), older_than_s=age, max_bytes=cap, dry_run=dry_run,
                             project=project_dir())
    except TimeoutError:
        raise Fail("an ingester is still running on the store; try again in a moment") from None
    for line in report_lines(report):
        click.echo(line)


@click.command()
def vacuum():
    """Rewrite the store compactly and give free space back (VACUUM INTO a copy, then an
    atomic swap; in place when another process holds the store open)."""
    if not store_exists():
        no_store(what="")
    db = db_path()
    try:
        with ingest_lock(db):
            result = do_vacuum(db)
    except TimeoutError:
        raise Fail("an ingester is still running on the store; try again in a moment") from None
    except OSError as exc:
        raise Fail(f"vacuum failed, the store is unchanged: {exc.strerror or exc}") from None
    how = ("rewritten and swapped in" if result["how"] == "swapped"
           else "vacuumed in place (another process holds the store open)")
    click.echo(f"store {how}: {human_bytes(result['before'])} -> {human_bytes(result['after'])}")
