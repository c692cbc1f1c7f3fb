"""`memhooks doctor`: a thin click command over memhooks.setup.doctor."""

from __future__ import annotations

import os
import sys

import click

from memhooks.cli._common import echo_json


def register(main: click.Group) -> None:
    main.add_command(doctor)


def check_lines(results) -> list[str]:
    return [f"{r.status:<4}  {r.name:<16} {r.detail}" for r in results]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {name, status, detail}.")
@click.option("--project", "project", type=click.Path(file_okay=False),
              help="Project whose settings to check (default: the current directory).")
def doctor(as_json, project):
    """Check the store, the registered hooks and MCP server, the Python and the Context7 API."""
    # lazy: each command's library code loads in that command only (CLI start-up)
    from memhooks.setup.doctor import run_checks

    results = run_checks(project=project or os.getcwd())
    if as_json:
        echo_json("doctor", [r.as_dict() for r in results])
    else:
        for line in check_lines(results):
            click.echo(line)
    sys.exit(1 if any(r.status == "fail" for r in results) else 0)
