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

Our entries are recognised by their command: it runs ``…/memhooks/_entry.py`` (Claude Code
validates settings files strictly, so no marker field is added). Files are parsed, changed
and written back with their own indentation, atomically (temp file + rename, mode kept),
and only when the bytes change; a file that is not valid JSON is never touched.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field

# The matchers live with the routing predicate; the plugin's hooks.json has the same strings
# (tests/test_plugin_layout.py keeps them equal).
from memhooks.tools import SERVE_MATCHER, SESSION_MATCHER, TOOL_MATCHER

SCOPES = ("user", "project", "local")
SERVER_NAME = "memhooks"
SERVE_TIMEOUT_S = 5
HOOK_TIMEOUT_S = 10
SESSION_START_TIMEOUT_S = 10

_OURS = re.compile(r"memhooks[/\\]_entry\.py")


class InstallError(Exception):
    """A one-line, user-facing reason to stop (nothing has been written)."""


# ----------------------------------------------------------------------------- paths

def home_dir() -> str:
    return os.path.expanduser("~")


def claude_config_dir() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR", "").strip() or os.path.join(home_dir(), ".claude")


def claude_json_path() -> str:
    return os.path.join(os.environ.get("CLAUDE_CONFIG_DIR", "").strip() or home_dir(), ".claude.json")


def project_key(project: str) -> str:
    return os.path.realpath(os.path.abspath(project))


def targets(scope: str, project: str) -> dict[str, str]:
    """{"hooks": settings file, "mcp": file holding the server} for a scope."""
    proj = project_key(project)
    if scope == "user":
        return {"hooks": os.path.join(claude_config_dir(), "settings.json"), "mcp": claude_json_path()}
    if scope == "project":
        return {"hooks": os.path.join(proj, ".claude", "settings.json"),
                "mcp": os.path.join(proj, ".mcp.json")}
    if scope == "local":
        return {"hooks": os.path.join(proj, ".claude", "settings.local.json"), "mcp": claude_json_path()}
    raise InstallError(f"unknown scope {scope!r} (use one of {', '.join(SCOPES)})")


def mcp_container_path(scope: str, project: str) -> list[str]:
    """Where `mcpServers` sits inside the MCP file."""
    return ["projects", project_key(project), "mcpServers"] if scope == "local" else ["mcpServers"]


# ----------------------------------------------------------------------------- our entries

def entry_file() -> str:
    """Absolute path of the installed `memhooks/_entry.py`."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_entry.py")


_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./~-]+")


def shell_quote(s: str) -> str:
    """Double quotes when that is safe (readable, and what Claude Code's own examples use)."""
    if _SAFE.fullmatch(s) or not any(c in s for c in '"$`\\!'):
        return f'"{s}"'
    return "'" + s.replace("'", "'\"'\"'") + "'"


@dataclass
class Entries:
    python: str
    entry: str

    @property
    def post_tool_use(self) -> str:
        return f"{shell_quote(self.python)} -I -S {shell_quote(self.entry)} post-tool-use"

    @property
    def pre_tool_use(self) -> str:
        return f"{shell_quote(self.python)} -I -S {shell_quote(self.entry)} pre-tool-use"

    @property
    def session_start(self) -> str:
        return f"{shell_quote(self.python)} -I -S {shell_quote(self.entry)} session-start"

    def hooks(self) -> dict[str, tuple[str, str, int]]:
        """event → (matcher, command, timeout)."""
        return {
            "PreToolUse": (SERVE_MATCHER, self.pre_tool_use, SERVE_TIMEOUT_S),
            "PostToolUse": (TOOL_MATCHER, self.post_tool_use, HOOK_TIMEOUT_S),
            "PostToolUseFailure": (TOOL_MATCHER, self.post_tool_use, HOOK_TIMEOUT_S),
            "SessionStart": (SESSION_MATCHER, self.session_start, SESSION_START_TIMEOUT_S),
        }

    def server(self, scope: str) -> dict:
        spec = {"command": self.python, "args": [self.entry, "mcp"]}
        if scope != "user":
            spec = {"type": "stdio", **spec}
        return spec


# memhooks' own read-only tools, which `install --allow` lets the agent use without asking.
MCP_READ_TOOLS = ("search_documents", "get_document", "lookup_library")
LOOKUP_COMMANDS = ("lc-cache-lookup", "lc-cache-lookup-docs")
_OUR_BASH_RULE = re.compile(
    r'Bash\((?:bash )?"?[^"()]*/(?:bin|Scripts)/lc-cache-lookup(?:-docs)?(?:\.exe)?"?(?: \*|:\*)\)')


def mcp_tool_rules(server: str = SERVER_NAME) -> list[str]:
    """Allow rules for the MCP tools (`mcp__memhooks__…`; a plugin's are
    `mcp__plugin_memhooks_memhooks__…`)."""
    return [f"mcp__{server}__{tool}" for tool in MCP_READ_TOOLS]


def lookup_paths(entries: Entries) -> list[str]:
    """The lc-cache-lookup* commands by absolute path: the bin/ shims of a checkout (run as
    `bash "…"`), and the console scripts beside the python."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(entries.entry)))
    out = []
    for name in LOOKUP_COMMANDS:
        shim = os.path.join(root, "bin", name)
        if os.path.isfile(shim):
            out.append(("bash", shim))
        script = os.path.join(os.path.dirname(entries.python), name)
        if os.path.isfile(script):
            out.append(("exec", script))
    return out


def allow_rules(entries: Entries) -> list[str]:
    """Permission rules for memhooks' read-only tools: its MCP tools, and lc-cache-lookup /
    lc-cache-lookup-docs by exact path, quoted and unquoted (rules match the command text)."""
    rules = mcp_tool_rules()
    for how, path in lookup_paths(entries):
        prefix = "bash " if how == "bash" else ""
        rules.append(f'Bash({prefix}"{path}" *)')
        if " " not in path:
            rules.append(f"Bash({prefix}{path} *)")
    return rules


def is_our_rule(rule) -> bool:
    return isinstance(rule, str) and (rule in mcp_tool_rules() or bool(_OUR_BASH_RULE.fullmatch(rule)))


def default_entries() -> Entries:
    return Entries(python=os.path.abspath(sys.executable), entry=entry_file())


def is_our_command(command) -> bool:
    return isinstance(command, str) and bool(_OURS.search(command))


def is_our_server(spec) -> bool:
    if not isinstance(spec, dict):
        return False
    args = spec.get("args")
    if isinstance(args, list) and any(is_our_command(a) for a in args):
        return True
    cmd = spec.get("command")
    if is_our_command(cmd):
        return True
    return isinstance(cmd, str) and os.path.basename(cmd) in ("memhooks", "memhooks-mcp")


# ----------------------------------------------------------------------------- JSON files

@dataclass
class JsonFile:
    path: str  # the real file (symlinks resolved)
    raw: bytes | None  # None when missing
    data: dict
    indent: int | str | None = 2
    trailing_newline: bool = True
    compact: bool = False

    @classmethod
    def load(cls, path: str) -> JsonFile:
        real = os.path.realpath(path)
        try:
            with open(real, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return cls(real, None, {})
        except OSError as exc:
            raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InstallError(f"{path} is not valid JSON (not UTF-8); left unchanged") from None
        if not text.strip():
            return cls(real, raw, {}, trailing_newline=text.endswith("\n"))
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InstallError(f"{path} is not valid JSON ({exc}); left unchanged") from None
        if not isinstance(data, dict):
            raise InstallError(f"{path} does not hold a JSON object; left unchanged")
        indent, compact = _detect_format(text)
        return cls(real, raw, data, indent=indent, trailing_newline=text.endswith("\n"),
                   compact=compact)

    def render(self, data: dict) -> bytes:
        if self.compact:
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        else:
            text = json.dumps(data, ensure_ascii=False, indent=self.indent)
        if self.trailing_newline:
            text += "\n"
        return text.encode("utf-8")


def _detect_format(text: str) -> tuple[int | str | None, bool]:
    """(indent, compact) of an existing file."""
    m = re.search(r"\n([ \t]+)\S", text)
    if m:
        ws = m.group(1)
        return (ws if "\t" in ws else len(ws)), False
    if "\n" not in text.strip():
        # One line: `{"a": 1}` (json.dumps default) or `{"a":1}` (compact).
        return None, not re.search(r'":\s', text)
    return 2, False


def _container(data: dict, path: list[str], *, create: bool, where: str):
    """Walk/create nested dicts; raise InstallError when a step is not an object."""
    node = data
    for i, key in enumerate(path):
        nxt = node.get(key)
        if nxt is None:
            if not create:
                return None
            nxt = node[key] = {}
        if not isinstance(nxt, dict):
            dotted = ".".join(path[: i + 1])
            raise InstallError(f"{where}: `{dotted}` is not a JSON object; left unchanged")
        node = nxt
    return node


# ----------------------------------------------------------------------------- merge

def _add_hooks(data: dict, entries: Entries, where: str) -> list[str]:
    """Add or refresh our hook groups. Returns the events changed."""
    hooks = data.get("hooks")
    if hooks is None:
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InstallError(f"{where}: `hooks` is not a JSON object; left unchanged")
    changed = []
    for event, (matcher, command, timeout) in entries.hooks().items():
        groups = hooks.get(event)
        if groups is None:
            groups = hooks[event] = []
        if not isinstance(groups, list):
            raise InstallError(f"{where}: `hooks.{event}` is not a JSON array; left unchanged")
        wanted = {"type": "command", "command": command, "timeout": timeout}
        found = False
        new_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                new_groups.append(group)
                continue
            keep, touched = [], False
            shared = any(not (isinstance(h, dict) and is_our_command(h.get("command")))
                         for h in group["hooks"])
            for h in group["hooks"]:
                if isinstance(h, dict) and is_our_command(h.get("command")):
                    if found or (shared and group.get("matcher") != matcher):
                        # a duplicate of ours, or ours inside someone else's group with
                        # another matcher: drop it (a group of our own is added below)
                        touched = True
                        continue
                    found = True
                    if h != wanted or group.get("matcher") != matcher:
                        h = dict(wanted)
                        group["matcher"] = matcher
                        touched = True
                keep.append(h)
            if touched:
                changed.append(event)
                if not keep:
                    continue
                group["hooks"] = keep
            new_groups.append(group)
        groups[:] = new_groups
        if not found:
            groups.append({"matcher": matcher, "hooks": [wanted]})
            changed.append(event)
    return sorted(set(changed), key=list(entries.hooks()).index)


def _remove_hooks(data: dict, where: str) -> list[str]:
    hooks = data.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        raise InstallError(f"{where}: `hooks` is not a JSON object; left unchanged")
    changed = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        new_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"]
                        if not (isinstance(h, dict) and is_our_command(h.get("command")))]
                if len(kept) != len(group["hooks"]):
                    changed.append(event)
                    if not kept:
                        continue  # the group held only ours: it was ours
                    group = {**group, "hooks": kept}
            new_groups.append(group)
        if event in changed:
            if new_groups:
                hooks[event] = new_groups
            else:
                del hooks[event]
    if changed and not hooks:
        del data["hooks"]
    return changed


def _add_server(data: dict, scope: str, project: str, entries: Entries, where: str) -> tuple[bool, str]:
    path = mcp_container_path(scope, project)
    servers = _container(data, path, create=True, where=where)
    spec = entries.server(scope)
    current = servers.get(SERVER_NAME)
    if current is not None and not is_our_server(current):
        return False, f"{where}: an MCP server named {SERVER_NAME!r} that memhooks did not add exists; left it alone"
    if current == spec:
        return False, ""
    servers[SERVER_NAME] = spec
    return True, ""


def _remove_server(data: dict, scope: str, project: str, where: str) -> bool:
    path = mcp_container_path(scope, project)
    servers = _container(data, path, create=False, where=where)
    if not servers or not is_our_server(servers.get(SERVER_NAME)):
        return False
    del servers[SERVER_NAME]
    # Drop the containers our removal emptied (walking back up).
    for depth in range(len(path), 0, -1):
        parent = _container(data, path[: depth - 1], create=False, where=where)
        child = parent.get(path[depth - 1])
        if isinstance(child, dict) and not child:
            del parent[path[depth - 1]]
        else:
            break
    return True


def _add_rules(data: dict, rules: list[str], where: str) -> list[str]:
    perms = _container(data, ["permissions"], create=True, where=where)
    allow = perms.get("allow")
    if allow is None:
        allow = perms["allow"] = []
    if not isinstance(allow, list):
        raise InstallError(f"{where}: `permissions.allow` is not a JSON array; left unchanged")
    added = [r for r in rules if r not in allow]
    allow.extend(added)
    return added


def _remove_rules(data: dict, where: str) -> list[str]:
    perms = data.get("permissions")
    if not isinstance(perms, dict) or not isinstance(perms.get("allow"), list):
        return []
    removed = [r for r in perms["allow"] if is_our_rule(r)]
    if removed:
        perms["allow"] = [r for r in perms["allow"] if not is_our_rule(r)]
        if not perms["allow"]:
            del perms["allow"]
        if not perms:
            del data["permissions"]
    return removed


# ----------------------------------------------------------------------------- plan / apply

@dataclass
class FileChange:
    path: str
    before: bytes | None
    after: bytes | None  # None: delete the file
    what: list[str] = field(default_factory=list)

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
         allow: bool = False) -> Plan:
    """Compute every file change first; raise InstallError (nothing written) on a bad file."""
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
    result.rules, result.rules_file = allow_rules(entries), hp
    current = (loaded[hp].data.get("permissions") or {}) if isinstance(loaded[hp].data, dict) else {}
    have = current.get("allow") if isinstance(current, dict) else None
    result.rules_missing = [r for r in result.rules if not (isinstance(have, list) and r in have)]
    if action == "install":
        events = _add_hooks(work[hp], entries, hp)
        what[hp] += [f"hooks {e}" for e in events]
        if allow:
            added = _add_rules(work[hp], result.rules, hp)
            if added:
                what[hp].append(f"{len(added)} allow rule{'s' if len(added) != 1 else ''}")
            result.rules_missing = []
        changed, note = _add_server(work[mp], scope, project, entries, mp)
        if changed:
            what[mp].append(f"MCP server {SERVER_NAME}")
        if note:
            result.notes.append(note)
    else:
        events = _remove_hooks(work[hp], hp)
        what[hp] += [f"hooks {e}" for e in dict.fromkeys(events)]
        removed = _remove_rules(work[hp], hp)
        if removed:
            what[hp].append(f"{len(removed)} allow rule{'s' if len(removed) != 1 else ''}")
        if _remove_server(work[mp], scope, project, mp):
            what[mp].append(f"MCP server {SERVER_NAME}")

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


def _atomic_write(path: str, data: bytes, expected: bytes | None) -> None:
    folder = os.path.dirname(path)
    created_dirs = not os.path.isdir(folder)
    if created_dirs:
        os.makedirs(folder, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    if mode is None:
        if os.path.basename(path) == ".claude.json":
            mode = 0o600
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".memhooks.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        # Someone (Claude Code itself rewrites ~/.claude.json) changed it meanwhile: retry.
        try:
            with open(path, "rb") as fh:
                now = fh.read()
        except FileNotFoundError:
            now = None
        if now != expected:
            raise _Raced()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class _Raced(Exception):
    pass


def apply(p: Plan) -> None:
    for ch in p.changes:
        if ch.after is None:
            try:
                with open(ch.path, "rb") as fh:
                    if fh.read() != ch.before:
                        raise _Raced()
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
            _atomic_write(ch.path, ch.after, ch.before)


def run(action: str, scope: str, project: str | None = None, *, dry_run: bool = False,
        entries: Entries | None = None, attempts: int = 3, allow: bool = False) -> Plan:
    """Plan and (unless dry_run) apply, re-planning if a file changed under us."""
    for i in range(attempts):
        p = plan(action, scope, project, entries, allow=allow)
        if dry_run:
            return p
        try:
            apply(p)
            return p
        except _Raced:
            if i == attempts - 1:
                raise InstallError("a settings file kept changing while memhooks was writing it; "
                                   "try again (with Claude Code closed)") from None
        except OSError as exc:
            raise InstallError(f"cannot write {getattr(exc, 'filename', '') or 'a settings file'}: "
                               f"{exc.strerror or exc}") from None
    return p  # pragma: no cover


def diff(ch: FileChange) -> str:
    import difflib

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
        servers = _container(mf.data, mcp_container_path(scope, project), create=False,
                             where=paths["mcp"])
        if servers and is_our_server(servers.get(SERVER_NAME)):
            out["server"] = servers[SERVER_NAME]
    except InstallError as exc:
        out["error"] = str(exc)
    return out


def command_paths(command: str) -> list[str]:
    """The absolute paths a hook command refers to (the python and the entry file)."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [w for w in words if os.path.isabs(w)]
