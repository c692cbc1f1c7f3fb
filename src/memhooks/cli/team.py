"""`memhooks team init|connect|push|pull|status|exclude`: thin click commands over memhooks.team
(`memhooks forget` is memhooks.cli.privacy)."""

from __future__ import annotations

import os

import click

from memhooks.cli import _render
from memhooks.cli._common import Fail, echo_json, open_store
from memhooks.config import project_dir
from memhooks.team.pull import pull
from memhooks.team.push import push
from memhooks.team.runner import run
from memhooks.team.settings import add_exclusion, exclusions, masked, save_url, team_url
from memhooks.team.status import local_status, probe
from memhooks.team.store import TeamError, classify, connect, migrate


def register(main: click.Group) -> None:
    main.add_command(team)


def _fail(exc):
    return Fail(str(exc))


def _url(url: str | None = None) -> str:
    url = url or team_url()
    if not url:
        raise _fail("no team store configured: set MEMHOOKS_TEAM_URL or run `memhooks team connect URL`")
    return url


@click.group()
def team():
    """Share captured documentation through a team PostgreSQL database (memhooks[team])."""


@team.command("init")
@click.option("--url", help="Connection string (default: the configured one).")
def team_init(url):
    """Create or upgrade the team schema (append-only migrations, safe to run concurrently)."""
    url = _url(url)
    try:
        pg = connect(url)
        try:
            applied = migrate(pg)
        finally:
            pg.close()
    except TeamError as exc:
        raise _fail(exc) from None
    except Exception as exc:  # noqa: BLE001 - psycopg is optional (not importable here): classify its errors
        raise _fail(classify(exc, url)) from None
    click.echo(f"{masked(url)}: " + (f"applied {', '.join(applied)}" if applied else "schema up to date"))


@team.command("connect")
@click.argument("url")
@click.option("--no-check", is_flag=True, help="Store it without trying to connect.")
def team_connect(url, no_check):
    """Store the team database's connection string (0600, beside the store)."""
    if not url.strip():
        raise _fail("empty connection string")
    if not no_check:
        p = probe(url)
        if not p["reachable"]:
            raise _fail(f"{p['error']} (not saved; use --no-check to save anyway)")
    path = save_url(url)
    click.echo(f"team store {masked(url)} saved in {path} (mode 0600)")
    if os.environ.get("MEMHOOKS_TEAM_URL", "").strip():
        click.echo("note: MEMHOOKS_TEAM_URL is set and takes precedence", err=True)


def _run(op, fn, **kwargs):
    _url()
    conn = open_store(ingest=(op == "push"))
    try:
        return run(op, conn, fn, respect_backoff=False, **kwargs)
    except TeamError as exc:
        raise _fail(exc) from None
    finally:
        conn.close()


@team.command("push")
@click.option("--budget", type=float, default=None, help="Seconds to spend (default 60).")
@click.option("--json", "as_json", is_flag=True)
def team_push(budget, as_json):
    """Push new documents, libraries and tier1 entries now (ignores the back-off)."""
    s = _run("push", push, budget_s=budget)
    if as_json:
        echo_json("team push", s)
        return
    click.echo(_render.team_push_line(s))


@team.command("pull")
@click.option("--project", type=click.Path(file_okay=False), help="Project directory (default: this one).")
@click.option("--library", "libraries", multiple=True, help="Also pull this library ID's documents.")
@click.option("--budget", type=float, default=None, help="Seconds to spend (default 10).")
@click.option("--max-bytes", type=int, default=None, help="Document bytes to bring in (default 16 MiB).")
@click.option("--json", "as_json", is_flag=True)
def team_pull(project, libraries, budget, max_bytes, as_json):
    """Bring the team's documents and tier1 IDs for this project's libraries into the local store."""
    project = os.path.realpath(project) if project else project_dir()
    s = _run("pull", pull, project=project, budget_s=budget, max_bytes=max_bytes,
             libraries=list(libraries))
    if as_json:
        echo_json("team pull", s)
        return
    click.echo(_render.team_pull_line(s))


@team.command("status")
@click.option("--offline", is_flag=True, help="Do not contact the server.")
@click.option("--json", "as_json", is_flag=True)
def team_status(offline, as_json):
    """Configuration (password masked), back-off, last push and pull, and the server's answer."""
    conn = open_store(ingest=False)
    try:
        info = local_status(conn)
    finally:
        conn.close()
    url = team_url()
    if info["configured"] and url and not offline:
        info["server"] = probe(url)
    if as_json:
        echo_json("team status", info)
        return
    for line in _render.team_status_lines(info):
        click.echo(line)


@team.command("exclude")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--list", "list_only", is_flag=True, help="Show the exclusions.")
def team_exclude(directory, list_only):
    """Never push documents or tier1 entries captured in DIRECTORY (or below it)."""
    if directory and not list_only:
        click.echo(f"excluded from the team store: {add_exclusion(directory)}")
        return
    for glob in exclusions():
        click.echo(glob)
