"""`memhooks install` and `uninstall`: thin click commands over memhooks.setup.install."""

from __future__ import annotations

import json
import os
import sys

import click

from memhooks.cli.transcripts import OFFER
from memhooks.setup.install import InstallError, diff, run

SCOPE_HELP = ("user: ~/.claude/settings.json + ~/.claude.json; project: .claude/settings.json + "
              ".mcp.json; local: .claude/settings.local.json + ~/.claude.json projects[DIR]")


def _run(action: str, scope: str, project: str | None, dry_run: bool, allow: bool = False) -> None:
    # Set by the plugin's bin/memhooks: the plugin has its own hooks; only its rules are written.
    plugin_root = os.environ.get("MEMHOOKS_PLUGIN_ROOT", "").strip() or None
    try:
        p = run(action, scope, project, dry_run=dry_run, allow=allow, plugin_root=plugin_root)
    except InstallError as exc:
        click.echo(f"memhooks: {exc}", err=True)
        sys.exit(1)
    for note in p.notes:
        click.echo(f"memhooks: {note}", err=True)
    if not p.changes:
        state = "installed" if action == "install" else "not installed"
        click.echo(f"memhooks is {'already ' if action == 'install' else ''}{state} "
                   f"({scope} scope); nothing changed")
        if action == "install":
            _after_install(p, dry_run)
        return
    for ch in p.changes:
        if dry_run:
            text = diff(ch)
            if text:
                click.echo(text, nl=not text.endswith("\n"))
            click.echo(f"would have {ch.verb} {ch.path} ({', '.join(ch.what)})")
        else:
            click.echo(f"{ch.verb} {ch.path} ({', '.join(ch.what)})")
    if action == "install" and scope == "project" and not dry_run and not plugin_root:
        click.echo("memhooks: project MCP servers in .mcp.json need approval in Claude Code "
                   "(or \"enableAllProjectMcpServers\": true)", err=True)
    if action == "install":
        _after_install(p, dry_run)


def _after_install(p, dry_run: bool) -> None:
    """Say which permissions to allow (unless --allow added them), and offer the backfill."""
    if p.rules_missing:
        click.echo(f"To let the agent use memhooks' read-only tools without a prompt each time, "
                   f"add to \"permissions\": {{\"allow\": [...]}} in {p.rules_file} "
                   f"(or run `memhooks install --allow`):", err=True)
        click.echo(json.dumps(p.rules_missing, indent=2), err=True)
    if not dry_run:
        click.echo(OFFER, err=True)


def _scope_options(fn):
    """--scope, --project and --dry-run, shared by install and uninstall."""
    fn = click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")(fn)
    fn = click.option("--project", "project", type=click.Path(file_okay=False),
                      help="Project directory for --scope project/local "
                           "(default: the current one).")(fn)
    return click.option("--scope", type=click.Choice(["user", "project", "local"]),
                        default="user", show_default=True, help=SCOPE_HELP)(fn)


def register(main: click.Group) -> None:
    @main.command()
    @_scope_options
    @click.option("--allow", is_flag=True,
                  help="Also allow memhooks' read-only tools (its MCP tools, lc-cache-lookup and "
                       "lc-cache-lookup-docs by exact path) in the scope's permissions.allow.")
    def install(scope, project, dry_run, allow):
        """Register memhooks' hooks and MCP server in Claude Code's settings (pip/uv installs).

        Never runs anything else: it prints the permission rules to add (or adds them with
        --allow) and how to backfill from past sessions (`memhooks import-transcripts`)."""
        _run("install", scope, project, dry_run, allow)

    @main.command()
    @_scope_options
    def uninstall(scope, project, dry_run):
        """Remove what `memhooks install` added, its allow rules too (and nothing else)."""
        _run("uninstall", scope, project, dry_run)
