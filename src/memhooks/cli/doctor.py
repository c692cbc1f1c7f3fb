"""`memhooks doctor`: a thin click command over memhooks.setup.doctor."""

from __future__ import annotations

import os
import sys

import click

from memhooks.cli._common import echo_json
from memhooks.termtext import StatusLine, is_terminal, width, wrap

NAME_WIDTH = 16


def register(main: click.Group) -> None:
    main.add_command(doctor)


def check_lines(results, width: int | None = None) -> list[str]:
    """One line per check (`status  name  detail`); with `width`, the detail wrapped at word
    boundaries under itself (or under a short indent on a narrow terminal)."""
    lines = []
    for r in results:
        head = f"{r.status:<4}  {r.name:<{NAME_WIDTH}} "
        if width is None:
            lines.append(head + r.detail)
            continue
        under = " " * len(head) if width - len(head) >= 30 else "      "
        lines += wrap(r.detail, width, head, under) or [head.rstrip()]
    return lines


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {name, status, detail}.")
@click.option("--project", "project", type=click.Path(file_okay=False),
              help="Project whose settings to check (default: the current directory).")
@click.option("--network", is_flag=True,
              help="Also ask the Context7 API and the team server (a few seconds when they are slow).")
@click.option("--deep", is_flag=True,
              help="Import every dependency in each Python the hooks use (else they are only found).")
def doctor(as_json, project, network, deep):
    """Check the store, the registered hooks and MCP server and the Python they use; with
    --network, the Context7 API and the team server too.

    Without --network and --deep it reads local files only and finishes in well under a
    second; at a terminal a status line on stderr says what is being checked."""
    # lazy: each command's library code loads in that command only (CLI start-up)
    from memhooks.setup.doctor import run_checks

    with StatusLine() as status:
        results = run_checks(project=project or os.getcwd(), network=network, deep=deep,
                             progress=lambda what: status.show(f"doctor: checking {what} …"))
    if as_json:
        echo_json("doctor", [r.as_dict() for r in results])
    else:
        for line in check_lines(results, width() if is_terminal() else None):
            click.echo(line)
    sys.exit(1 if any(r.status == "fail" for r in results) else 0)
