"""`memhooks forget`, `memhooks pause [DURATION]`, `memhooks resume`: thin click commands over
memhooks.store.forget and memhooks.gate (the team store is told here, after the local
forget: store/ never reaches the team code)."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime

import click

from memhooks.cli._common import open_store
from memhooks.cli.results import emit
from memhooks.config import db_path
from memhooks.config_file import parse_duration
from memhooks.gate import pause, resume
from memhooks.store.forget import Criteria
from memhooks.store.forget import run as forget_run
from memhooks.store.journal import _spool_dirs
from memhooks.team.push import push_forgets
from memhooks.team.runner import run
from memhooks.team.settings import configured
from memhooks.team.store import TeamError


def register(main: click.Group) -> None:
    for cmd in (forget_cmd, pause_cmd, resume_cmd):
        main.add_command(cmd)


def parse_when(text: str, now: float) -> float:
    """A point in time: an ISO date or date-time (local time unless it says Z or an
    offset), or a duration meaning that long ago (`2h`, `7d`)."""
    s = text.strip()
    try:
        return now - parse_duration(s)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is neither a date (2025-01-31, 2025-01-31T14:00) "
                                 "nor a duration ago (2h, 7d)") from None
    return when.timestamp()


def _duration(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


# ----------------------------------------------------------------------------- pause

@click.command("pause")
@click.argument("duration", required=False, callback=_duration)
def pause_cmd(duration):
    """Stop capturing, serving and warming, everywhere, for DURATION (30m, 2h, 1d) or until
    `memhooks resume`."""
    until = time.time() + duration if duration else None
    pause(db_path(), until)
    if until is None:
        click.echo("memhooks paused until `memhooks resume`: nothing is captured, served or warmed")
    else:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(until))
        click.echo(f"memhooks paused until {stamp}: nothing is captured, served or warmed")


@click.command("resume")
def resume_cmd():
    """End a pause: capture, serving and warming start again."""
    click.echo("memhooks resumed" if resume(db_path()) else "memhooks was not paused")


# ----------------------------------------------------------------------------- forget

def _line(doc: dict) -> str:
    what = doc.get("url") or doc.get("library_id") or doc.get("title") or ""
    what = " ".join(str(what).split())
    if len(what) > 90:
        what = what[:89] + "…"
    return f"  #{doc['id']}  {doc['source_tool']}  {doc['bytes'] or 0} bytes  {what}"


@click.command("forget")
@click.option("--id", "doc_ids", multiple=True, type=int, metavar="ID",
              help="A document id (from `memhooks search`); repeat for several.")
@click.option("--document", "legacy_ids", multiple=True, type=int, hidden=True)
@click.option("--url", help="Documents whose URL starts with this.")
@click.option("--library", help="Documents of this Context7 library ID (its versions too).")
@click.option("--project", type=click.Path(file_okay=False),
              help="Documents captured in this project folder (or below it).")
@click.option("--source", help="Documents from this source: context7, exa, webfetch, websearch...")
@click.option("--since", help="Captured at or after: a date (2025-01-31[T14:00]) or a duration ago (2h).")
@click.option("--until", help="Captured at or before: a date or a duration ago.")
@click.option("--dry-run", is_flag=True, help="Say what would go; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True)
def forget_cmd(doc_ids, legacy_ids, url, library, project, source, since, until, dry_run, yes,
               as_json):
    """Delete documents, and every copy of their text (journal, full-text index, free pages,
    spool), from this store and the team store; the same text is never stored again.
    Criteria combine: every one given must hold."""
    now = time.time()
    criteria = Criteria(ids=[*doc_ids, *legacy_ids], url=url, library=library,
                        project=os.path.realpath(project) if project else None, source=source,
                        since=parse_when(since, now) if since else None,
                        until=parse_when(until, now) if until else None)
    if criteria.empty():
        raise click.UsageError("say what to forget: --id, --url, --library, --project, --source, "
                               "--since or --until")

    def review(docs: list, preview: dict) -> None:
        if not as_json:
            _show(docs, preview, dry_run)
        if not dry_run and not yes and sys.stdin.isatty():
            click.confirm(f"Forget these {len(docs)} document(s)?", abort=True)

    conn = open_store(ingest=True)  # pending events first: what they captured goes too
    try:
        result = forget_run(conn, criteria, dry_run=dry_run, now=now, spool_folders=_spool_dirs(db_path()),
                     review=review, tell_team=_tell_team)
    finally:
        conn.close()
    _render(result, as_json, ids_only=bool(criteria.ids) and not (url or library or project or source
                                                                   or since or until))


def _render(result: dict, as_json: bool, ids_only: bool) -> None:
    if as_json:
        _emit({k: v for k, v in result.items() if k not in ("docs", "forgotten", "spool")})
    elif not result["docs"]:
        click.echo("nothing to forget: no document matches")
    elif not result["dry_run"]:
        spool, team = result["spool"], result["team"]
        click.echo(f"forgot {result['forgotten']} document(s) locally: {result['events']} journal "
                   f"event(s), {result['captures']} capture(s), {result['tier2']} tier2 entr(ies)"
                   + (f", {len(spool)} spool file(s)" if spool else ""))
        if not result["wal_truncated"]:
            click.echo("memhooks: another process held the store's WAL; its old pages go at the "
                       "next `memhooks forget` or checkpoint", err=True)
        if team == "done":
            click.echo("removed from the team store")
        elif team is not None:
            click.echo(f"team store not updated yet ({team}); the next push sends it", err=True)
    if not result["docs"] and ids_only:
        sys.exit(1)


def _emit(result: dict) -> None:
    emit("forget", result)


def _show(docs: list, preview: dict, dry_run: bool) -> None:
    head = "would forget" if dry_run else "forgetting"
    click.echo(f"{head} {len(docs)} document(s), {preview['bytes']} bytes; {len(preview['events'])} "
               f"journal event(s), {preview['captures']} capture(s), {preview['tier2']} tier2 entr(ies):")
    for doc in docs[:50]:
        click.echo(_line(doc))
    if len(docs) > 50:
        click.echo(f"  … and {len(docs) - 50} more")


def _tell_team(conn) -> str | None:
    """Send the forgotten hashes to the team store when one is configured: 'done', None
    (no team store), or why not yet (the next push sends them)."""
    if not configured():
        return None
    try:
        run("push", conn, lambda c, pg: {"forgotten": push_forgets(c, pg)}, respect_backoff=False)
        return "done"
    except TeamError as exc:  # without memhooks[team] too: kind "not-installed"
        return str(exc)
