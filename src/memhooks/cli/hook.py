"""`memhooks hook post-tool-use|session-start`: the hooks, run from the command line."""

from __future__ import annotations

import sys

import click

from memhooks.entry.post_tool_use import main as post_tool_use
from memhooks.entry.session_start import session_start
from memhooks.team.runner import spawn


def register(main: click.Group) -> None:
    main.add_command(hook)


@click.group()
def hook():
    """Run a hook (reads the hook JSON on stdin; always exits 0)."""


@hook.command("post-tool-use")
def hook_post_tool_use():
    """The PostToolUse hook: capture a docs lookup's result, or answer a failed one."""
    sys.exit(post_tool_use())


@hook.command("session-start")
def hook_session_start():
    """The SessionStart hook: warm the project's libraries, then pull from the team store."""
    sys.exit(session_start(after_warm=lambda db, project: spawn("pull", db, project)))
