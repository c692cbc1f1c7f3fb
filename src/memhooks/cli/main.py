"""The `memhooks` command line: the click group, its one-line errors, and the command modules
(one per command group, each a thin layer over the library) registered into it."""

from __future__ import annotations

import sqlite3
import sys

import click

from memhooks import __version__
from memhooks.cli import (
    cache,
    config_cmd,
    doctor,
    exchange,
    hook,
    install,
    journal,
    maintenance,
    privacy,
    recall,
    sources,
    team,
    transcripts,
    warm,
)
from memhooks.cli._common import store_error_line


class OneLineErrors(click.Group):
    """Usage errors in one line (`memhooks: …; see 'memhooks CMD --help'`), exit 2."""

    def main(self, *args, **kwargs):
        try:
            kwargs["standalone_mode"] = False
            return super().main(*args, **kwargs)
        except click.exceptions.Abort:
            click.echo("memhooks: aborted", err=True)
            sys.exit(1)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "memhooks"
            click.echo(f"memhooks: {exc.format_message()} (see '{where} --help')", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except sqlite3.DatabaseError as exc:  # a damaged store: one clear line, no traceback
            click.echo(store_error_line(exc), err=True)
            sys.exit(1)

    def format_commands(self, ctx, formatter):
        """`memhooks --help` lists the commands in the groups bare `memhooks` uses."""
        rows = {name: cmd for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden}
        width = max((len(n) for n in rows), default=0)
        limit = formatter.width - 6 - width
        placed: set[str] = set()
        for title, names in SECTIONS:
            entries = [(n.ljust(width), rows[n].get_short_help_str(limit)) for n in names if n in rows]
            placed.update(n.strip() for n, _ in entries)
            if entries:
                with formatter.section(title):
                    formatter.write_dl(entries)
        rest = [(n.ljust(width), c.get_short_help_str(limit)) for n, c in rows.items() if n not in placed]
        if rest:
            with formatter.section("more"):
                formatter.write_dl(rest)


SECTIONS = (
    ("get started", ("install", "uninstall", "import-transcripts", "warm")),
    ("look", ("stats", "search", "show", "doctor")),
    ("keep it small, forget on request", ("prune", "vacuum", "forget", "pause", "resume", "config")),
    ("sources you add", ("add", "refresh", "sources")),
    ("share with a team", ("team",)),
    ("plumbing", ("cache", "scan", "export", "import", "replay", "reindex", "ingest", "hook", "mcp")),
)


# Bare `memhooks` shows these sections of SECTIONS; the lines come from the commands' help.
SHORT_SECTIONS = 2


def short_usage(ctx: click.Context) -> str:
    """What bare `memhooks` prints: the first sections of `--help`, from the commands
    themselves (no hand-kept copy to drift)."""
    group = ctx.command
    assert isinstance(group, click.Group)
    formatter = ctx.make_formatter()
    formatter.write_text("memhooks keeps the library docs your coding agent looks up.")
    formatter.write_paragraph()
    formatter.write_text("usage: memhooks COMMAND [ARGS]...")
    width = max(len(n) for _, names in SECTIONS[:SHORT_SECTIONS] for n in names)
    for title, names in SECTIONS[:SHORT_SECTIONS]:
        rows = [(n.ljust(width), cmd.get_short_help_str(formatter.width - 6 - width))
                for n in names if (cmd := group.get_command(ctx, n)) is not None]
        formatter.write_paragraph()
        formatter.write_text(title)  # no colon: bare `memhooks` reads as a short page
        with formatter.indentation():
            formatter.write_dl(rows)
    formatter.write_paragraph()
    formatter.write_text("`memhooks --help` lists every command; `memhooks COMMAND --help` explains one.")
    return formatter.getvalue().rstrip("\n")


@click.group(cls=OneLineErrors, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memhooks")
@click.pass_context
def main(ctx):
    """memhooks: capture, warm and recall the library docs your coding agent looks up."""
    if ctx.invoked_subcommand is None:
        click.echo(short_usage(ctx))


for _module in (hook, journal, cache, warm, recall, transcripts, exchange, install, doctor, team,
                privacy, config_cmd, sources, maintenance):
    _module.register(main)


if __name__ == "__main__":  # pragma: no cover
    main()
