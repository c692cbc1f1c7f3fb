"""memhooks' entries in Claude Code's settings: where each scope's files live, the hook
commands and the MCP server spec memhooks writes, the allow rules for its read-only tools,
and how our entries are recognised: by the command running memhooks' launcher
(``…/memhooks-launch-<key>.py``, memhooks.setup.launcher) or, as written before it,
``…/memhooks/_entry.py``."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

# The matchers live with the routing predicate; the plugin's hooks.json has the same strings
# (tests/test_plugin_layout.py keeps them equal).
from memhooks.doc_sources import BUILTIN, user_rows
from memhooks.setup.launcher import launcher_path, package_dir
from memhooks.setup.settings_file import InstallError
from memhooks.tools import SERVE_MATCHER, SESSION_MATCHER, TOOL_MATCHER, serve_matcher, tool_matcher
from memhooks.warm.context import lookup_command

SCOPES = ("user", "project", "local")
SERVER_NAME = "memhooks"
SERVE_TIMEOUT_S = 5
HOOK_TIMEOUT_S = 10
SESSION_START_TIMEOUT_S = 10

_OURS = re.compile(r"memhooks[/\\]_entry\.py|memhooks-launch-[0-9a-f]{8,64}\.py")
# After the interpreter: a hook whose interpreter is gone (a deleted venv) exits 0, silently.
HOOK_TAIL = " 2>/dev/null || true"


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
    """Absolute path of the running package's `memhooks/_entry.py`."""
    return os.path.join(package_dir(), "_entry.py")


_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./~-]+")


def shell_quote(s: str) -> str:
    """Double quotes when that is safe (readable, and what Claude Code's own examples use)."""
    if _SAFE.fullmatch(s) or not any(c in s for c in '"$`\\!'):
        return f'"{s}"'
    return "'" + s.replace("'", "'\"'\"'") + "'"


@dataclass
class Entries:
    python: str
    entry: str  # what the commands run: the launcher (or a package's `_entry.py`)
    package: str = ""  # the memhooks package folder (default: the entry's folder)

    @property
    def package_dir(self) -> str:
        return self.package or os.path.dirname(self.entry)

    def _command(self, what: str) -> str:
        return f"{shell_quote(self.python)} -I -S {shell_quote(self.entry)} {what}{HOOK_TAIL}"

    @property
    def post_tool_use(self) -> str:
        return self._command("post-tool-use")

    @property
    def pre_tool_use(self) -> str:
        return self._command("pre-tool-use")

    @property
    def session_start(self) -> str:
        return self._command("session-start")

    def hooks(self) -> dict[str, tuple[str, str, int]]:
        """event → (matcher, command, timeout). The matchers cover the user's own docs
        sources (`[[docs_source]]` rows of the settings file) as they are when this runs."""
        mine = user_rows()[0]
        serve = serve_matcher(BUILTIN + mine) if mine else SERVE_MATCHER
        tool = tool_matcher(BUILTIN + mine) if mine else TOOL_MATCHER
        return {
            "PreToolUse": (serve, self.pre_tool_use, SERVE_TIMEOUT_S),
            "PostToolUse": (tool, self.post_tool_use, HOOK_TIMEOUT_S),
            "PostToolUseFailure": (tool, self.post_tool_use, HOOK_TIMEOUT_S),
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


def lookup_paths(entries: Entries) -> list[tuple[str, str]]:
    """The lc-cache-lookup* commands by absolute path: the bin/ shims of a checkout (run as
    `bash "…"`), and the console scripts beside the python."""
    root = os.path.dirname(os.path.dirname(entries.package_dir))
    out: list[tuple[str, str]] = []
    for name in LOOKUP_COMMANDS:
        shim = os.path.join(root, "bin", name)
        if os.path.isfile(shim):
            out.append(("bash", shim))
        script = os.path.join(os.path.dirname(entries.python), name)
        if os.path.isfile(script):
            out.append(("exec", script))
    return out


def command_rule(command: str) -> str | None:
    """The allow rule covering `command ARGS…` (a command as warm.context.lookup_command
    names it), or None for a bare name, which no rule written by path covers."""
    return f"Bash({command} *)" if command.startswith(('bash "', '"')) else None


def allow_rules(entries: Entries) -> list[str]:
    """Permission rules for memhooks' read-only tools: its MCP tools, and lc-cache-lookup /
    lc-cache-lookup-docs by exact path, quoted and unquoted (rules match the command text).
    The first rule for each command covers it exactly as SessionStart tells the agent to run
    it (warm.context.lookup_command, from the same Python and package)."""
    rules = mcp_tool_rules()
    for name in LOOKUP_COMMANDS:
        told = command_rule(lookup_command(name, entries.python, entries.package_dir))
        if told is not None:
            rules.append(told)
    for how, path in lookup_paths(entries):
        prefix = "bash " if how == "bash" else ""
        for rule in (f'Bash({prefix}"{path}" *)', f"Bash({prefix}{path} *)" if " " not in path else None):
            if rule is not None and rule not in rules:
                rules.append(rule)
    return rules


# The plugin's MCP server is `plugin:memhooks:memhooks`: its tools are mcp__plugin_memhooks_memhooks__….
PLUGIN_SERVER = "plugin_memhooks_memhooks"


def plugin_allow_rules(root: str) -> list[str]:
    """The same rules for a plugin install (`memhooks install --allow` through the plugin's
    bin/memhooks): the plugin server's tools, and the plugin's bin/ lookups by exact path (as
    SessionStart names them to the agent: `bash "<root>/bin/lc-cache-lookup-docs"`)."""
    rules = mcp_tool_rules(PLUGIN_SERVER)
    root = os.path.abspath(root)
    for name in LOOKUP_COMMANDS:
        shim = os.path.join(root, "bin", name)
        # as lookup_command names it for a SessionStart running from this root
        rules.append(command_rule(f'bash "{shim}"') or f'Bash(bash "{shim}" *)')
        if " " not in shim:
            rules.append(f"Bash(bash {shim} *)")
    return rules


def is_our_rule(rule, plugin: bool = False) -> bool:
    """One of the rules `install --allow` adds (pip form, or with plugin=True the plugin's)."""
    if not isinstance(rule, str):
        return False
    return rule in mcp_tool_rules(PLUGIN_SERVER if plugin else SERVER_NAME) or bool(_OUR_BASH_RULE.fullmatch(rule))


def default_entries() -> Entries:
    """This interpreter, through its launcher in memhooks' data folder."""
    python = os.path.abspath(sys.executable)
    return Entries(python=python, entry=launcher_path(python), package=package_dir())


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

