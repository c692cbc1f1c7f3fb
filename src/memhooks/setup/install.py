"""`memhooks install` / `uninstall`: register the hooks and the MCP server in Claude Code's
settings files, for a pip/uv tool install (the plugin install needs none of this).

Where each scope lives (Claude Code docs: settings and MCP scopes):

=========  =======================================  ==================================================
scope      hooks                                    MCP server ``memhooks``
=========  =======================================  ==================================================
user       ``~/.claude/settings.json``              ``~/.claude.json`` top-level ``mcpServers``
project    ``<project>/.claude/settings.json``      ``<project>/.mcp.json`` ``mcpServers``
local      ``<project>/.claude/settings.local.json`` ``~/.claude.json`` ``projects["<abs project>"].mcpServers``
=========  =======================================  ==================================================

``~/.claude`` is ``$CLAUDE_CONFIG_DIR`` when that is set, and ``~/.claude.json`` is then
``$CLAUDE_CONFIG_DIR/.claude.json`` (as Claude Code resolves them).

The commands run memhooks' launcher, a small script `install` writes into memhooks' data folder
(memhooks.setup.launcher), so they keep working when memhooks is reinstalled, upgraded or
installed editable. Our entries are recognised by their command: it runs that launcher, or
``…/memhooks/_entry.py`` as installs before it wrote (Claude Code validates settings files
strictly, so no marker field is added). Files are parsed, changed
and written back with their own indentation, atomically (temp file + rename, mode kept),
and only when the bytes change; a file that is not valid JSON is never touched.

This module is the plan (every change computed first), its application and the inspection
doctor uses. The parts: ``memhooks.setup.entries`` (scopes' paths, our hook commands, server
spec and allow rules), ``memhooks.setup.settings_file`` (reading and writing a settings file
in its own format), ``memhooks.setup.settings_merge`` (adding and removing our entries).
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
from dataclasses import dataclass, field

from memhooks.files import make_private_dirs

# Re-exported: callers and tests use `memhooks.setup.install` as the one entry point.
from memhooks.setup.entries import (
    HOOK_TIMEOUT_S,
    LOOKUP_COMMANDS,
    MCP_READ_TOOLS,
    SCOPES,
    SERVE_MATCHER,
    SERVE_TIMEOUT_S,
    SERVER_NAME,
    SESSION_MATCHER,
    SESSION_START_TIMEOUT_S,
    TOOL_MATCHER,
    Entries,
    allow_rules,
    claude_config_dir,
    claude_json_path,
    default_entries,
    entry_file,
    home_dir,
    is_our_command,
    is_our_rule,
    is_our_server,
    lookup_paths,
    mcp_container_path,
    mcp_tool_rules,
    plugin_allow_rules,
    project_key,
    shell_quote,
    targets,
)
from memhooks.setup.launcher import is_launcher
from memhooks.setup.launcher import render as render_launcher
from memhooks.setup.settings_file import InstallError, JsonFile, Raced, atomic_write, container
from memhooks.setup.settings_merge import (
    add_hooks,
    add_rules,
    add_server,
    remove_hooks,
    remove_rules,
    remove_server,
)

__all__ = [
    "HOOK_TIMEOUT_S", "LOOKUP_COMMANDS", "MCP_READ_TOOLS", "SCOPES", "SERVE_MATCHER", "SERVE_TIMEOUT_S",
    "SERVER_NAME", "SESSION_MATCHER", "SESSION_START_TIMEOUT_S", "TOOL_MATCHER", "Entries", "FileChange",
    "InstallError", "JsonFile", "Plan", "allow_rules", "apply", "claude_config_dir", "claude_json_path",
    "command_paths", "default_entries", "diff", "entry_file", "home_dir", "installed_entries",
    "is_our_command", "is_our_rule", "is_our_server", "lookup_paths", "mcp_container_path",
    "mcp_tool_rules", "plan", "project_key", "run", "shell_quote", "targets",
]


@dataclass
class FileChange:
    path: str
    before: bytes | None
    after: bytes | None  # None: delete the file
    what: list[str] = field(default_factory=list)
    kind: str = "settings"  # or "launcher" (a script: no diff shown)

    @property
    def verb(self) -> str:
        if self.before is None:
            return "created"
        if self.after is None:
            return "removed"
        return "updated"


@dataclass
class Plan:
    action: str
    scope: str
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # the allow rules for memhooks' read-only tools
    rules_file: str = ""  # where they go (the scope's settings file)
    rules_missing: list[str] = field(default_factory=list)  # of those, not in that file


def plan(action: str, scope: str, project: str | None = None, entries: Entries | None = None,
         allow: bool = False, plugin_root: str | None = None) -> Plan:
    """Compute every file change first; raise InstallError (nothing written) on a bad file.

    With plugin_root (run through the plugin's bin/memhooks), the plugin registers the hooks
    and the MCP server itself: only its allow rules are added (--allow), printed or removed."""
    if action not in ("install", "uninstall"):
        raise ValueError(action)
    if scope not in SCOPES:
        raise InstallError(f"unknown scope {scope!r} (use one of {', '.join(SCOPES)})")
    project = project or os.getcwd()
    if scope != "user" and not os.path.isdir(project):
        raise InstallError(f"project directory {project} does not exist")
    entries = entries or default_entries()
    paths = targets(scope, project)
    result = Plan(action, scope)
    loaded: dict[str, JsonFile] = {}
    for p in dict.fromkeys(paths.values()):
        loaded[p] = JsonFile.load(p)
    work = {p: json.loads(json.dumps(f.data)) for p, f in loaded.items()}
    what: dict[str, list[str]] = {p: [] for p in loaded}

    hp, mp = paths["hooks"], paths["mcp"]
    result.rules = plugin_allow_rules(plugin_root) if plugin_root else allow_rules(entries)
    result.rules_file = hp
    current = (loaded[hp].data.get("permissions") or {}) if isinstance(loaded[hp].data, dict) else {}
    have = current.get("allow") if isinstance(current, dict) else None
    result.rules_missing = [r for r in result.rules if not (isinstance(have, list) and r in have)]
    if plugin_root:
        result.notes.append("the plugin registers its own hooks and MCP server; only the permission "
                            "rules for its read-only tools are " + ("removed" if action == "uninstall" else
                                                                   "added" if allow else "printed"))
        if action == "install" and allow:
            added = add_rules(work[hp], result.rules, hp)
            if added:
                what[hp].append(f"{len(added)} allow rule{'s' if len(added) != 1 else ''}")
            result.rules_missing = []
        elif action == "uninstall":
            removed = remove_rules(work[hp], hp, plugin=True)
            if removed:
                what[hp].append(f"{len(removed)} allow rule{'s' if len(removed) != 1 else ''}")
    elif action == "install":
        events = add_hooks(work[hp], entries, hp)
        what[hp] += [f"hooks {e}" for e in events]
        if allow:
            added = add_rules(work[hp], result.rules, hp)
            if added:
                what[hp].append(f"{len(added)} allow rule{'s' if len(added) != 1 else ''}")
            result.rules_missing = []
        changed, note = add_server(work[mp], scope, project, entries, mp)
        if changed:
            what[mp].append(f"MCP server {SERVER_NAME}")
        if note:
            result.notes.append(note)
    else:
        events = remove_hooks(work[hp], hp)
        what[hp] += [f"hooks {e}" for e in dict.fromkeys(events)]
        removed = remove_rules(work[hp], hp)
        if removed:
            what[hp].append(f"{len(removed)} allow rule{'s' if len(removed) != 1 else ''}")
        if remove_server(work[mp], scope, project, mp):
            what[mp].append(f"MCP server {SERVER_NAME}")

    if action == "install" and is_launcher(entries.entry) and not plugin_root:
        result.changes.append(_launcher_change(entries))
        if result.changes[-1].after == result.changes[-1].before:
            result.changes.pop()
    for p, f in loaded.items():
        result.files.append(p)
        if not what[p]:
            continue
        data = work[p]
        if action == "uninstall" and not data and f.raw is not None:
            after = None  # everything in it was ours
        else:
            after = f.render(data)
        if after == f.raw:
            continue
        result.changes.append(FileChange(f.path, f.raw, after, what[p]))
    return result


def _launcher_change(entries: Entries) -> FileChange:
    try:
        with open(entries.entry, "rb") as fh:
            before: bytes | None = fh.read()
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise InstallError(f"cannot read {entries.entry}: {exc.strerror or exc}") from None
    return FileChange(entries.entry, before, render_launcher(entries.python, entries.package_dir),
                      [f"launcher for {entries.python}"], kind="launcher")


def apply(p: Plan) -> None:
    for ch in p.changes:
        if ch.kind == "launcher":
            make_private_dirs(os.path.dirname(ch.path))  # memhooks' data folder: 0700
        if ch.after is None:
            try:
                with open(ch.path, "rb") as fh:
                    if fh.read() != ch.before:
                        raise Raced()
            except FileNotFoundError:
                continue
            os.unlink(ch.path)
            folder = os.path.dirname(ch.path)
            if os.path.basename(folder) == ".claude" and folder != claude_config_dir():
                try:
                    os.rmdir(folder)  # only when empty
                except OSError:
                    pass
        else:
            atomic_write(ch.path, ch.after, ch.before)


def run(action: str, scope: str, project: str | None = None, *, dry_run: bool = False,
        entries: Entries | None = None, attempts: int = 3, allow: bool = False,
        plugin_root: str | None = None) -> Plan:
    """Plan and (unless dry_run) apply, re-planning if a file changed under us."""
    for i in range(attempts):
        p = plan(action, scope, project, entries, allow=allow, plugin_root=plugin_root)
        if dry_run:
            return p
        try:
            apply(p)
            return p
        except Raced:
            if i == attempts - 1:
                raise InstallError("a settings file kept changing while memhooks was writing it; "
                                   "try again (with Claude Code closed)") from None
        except OSError as exc:
            raise InstallError(f"cannot write {getattr(exc, 'filename', '') or 'a settings file'}: "
                               f"{exc.strerror or exc}") from None
    return p  # pragma: no cover


def diff(ch: FileChange) -> str:
    if ch.kind == "launcher":
        return ""
    before = (ch.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
    after = (ch.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
    a = ch.path if ch.before is not None else "/dev/null"
    b = ch.path if ch.after is not None else "/dev/null"
    return "".join(difflib.unified_diff(before, after, a, b))


# ----------------------------------------------------------------------------- inspection (doctor)

def installed_entries(scope: str, project: str | None = None) -> dict:
    """What our entries in a scope look like: {"hooks": {event: command}, "server": spec|None,
    "files": {...}, "error": str|None}. Never raises."""
    project = project or os.getcwd()
    out: dict = {"scope": scope, "hooks": {}, "server": None, "files": {}, "error": None}
    try:
        paths = targets(scope, project)
        out["files"] = paths
        hf = JsonFile.load(paths["hooks"])
        hooks = hf.data.get("hooks")
        if isinstance(hooks, dict):
            for event, groups in hooks.items():
                for g in groups if isinstance(groups, list) else []:
                    for h in (g.get("hooks") if isinstance(g, dict) else None) or []:
                        if isinstance(h, dict) and is_our_command(h.get("command")):
                            out["hooks"].setdefault(event, h["command"])
        mf = JsonFile.load(paths["mcp"])
        servers = container(mf.data, mcp_container_path(scope, project), create=False,
                             where=paths["mcp"])
        if servers and is_our_server(servers.get(SERVER_NAME)):
            out["server"] = servers[SERVER_NAME]
    except InstallError as exc:
        out["error"] = str(exc)
    return out


def command_paths(command: str) -> list[str]:
    """The absolute paths a hook command refers to (the python and the entry file)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [w for w in words if os.path.isabs(w)]
