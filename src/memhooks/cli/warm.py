"""`memhooks scan` and `memhooks warm`: thin click commands over memhooks.warm."""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager, closing, nullcontext

import click

from memhooks.cli import _render
from memhooks.cli._common import echo_json, echo_lines, open_store
from memhooks.config import context7_api_url, db_path
from memhooks.config import top_n as default_top
from memhooks.gate import blocked
from memhooks.warm import settings
from memhooks.warm.rank import candidates
from memhooks.warm.resolve import warm
from memhooks.warm.scan import scan_project


def register(main: click.Group) -> None:
    for cmd in (scan_cmd, warm_cmd):
        main.add_command(cmd)


@click.command("scan")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--top", "top_n", type=int, default=None, help="How many libraries (default 20).")
@click.option("--direct-only", is_flag=True, default=None,
              help="Direct dependencies only (also MEMHOOKS_DIRECT_ONLY=1).")
@click.option("--json", "as_json", is_flag=True)
def scan_cmd(directory, top_n, direct_only, as_json):
    """List the project's ranked libraries from its lockfiles and manifests."""
    project = os.path.realpath(directory)
    result = scan_project(project)
    n = top_n or default_top()
    only = settings.direct_only() if direct_only is None else direct_only
    ranked = candidates(result.deps, n, backfill=n, direct_only=only)[:n]
    if as_json:
        echo_json("scan", _render.scan_json(project, result, ranked))
        return
    echo_lines(*_render.scan_lines(result, ranked))


@click.command("warm")
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--budget", type=float, default=None, help="Seconds for Context7 API requests.")
@click.option("--top", "top_n", type=int, default=None)
@click.option("--direct-only", is_flag=True, default=None,
              help="Warm direct dependencies only (also MEMHOOKS_DIRECT_ONLY=1).")
@click.option("--json", "as_json", is_flag=True)
def warm_cmd(directory, budget, top_n, direct_only, as_json):
    """Pre-resolve the project's top libraries to Context7 IDs (tier1).

    Exits 0 when it did what it could: a network or rate-limit problem is said in one line,
    with what is already cached (a real error exits non-zero)."""
    project = os.path.realpath(directory)

    if why := blocked(db_path(), project):
        click.echo(f"memhooks: not warming {project}: {why}", err=True)
        return
    shown: AbstractContextManager[dict] = (
        nullcontext({}) if as_json else _render.warm_progress(project))
    with closing(open_store()) as conn, shown as callbacks:
        result = warm(conn, project, budget_s=budget, top_n=top_n, retry_unreachable=True,
                      direct_only=direct_only, **callbacks)
    if as_json:
        echo_json("warm", _render.warm_json(project, result))
    else:
        echo_lines(*_render.warm_lines(result, context7_api_url()))
    sys.exit(0)
