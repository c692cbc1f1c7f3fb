"""Which Claude Code CLI runs a hook, and so which PostToolUse output field it honours
(standard library only; the PostToolUse hook asks only when it has a fallback to give).

The hook payload carries no CLI version, and `claude --version` costs a process start
(hundreds of ms). Cheap signals, in order:

1. `MEMHOOKS_CLI_VERSION` (a setting: the version to assume).
2. The session transcript (`transcript_path` of the payload): every entry the CLI writes
   there has `"sessionId":"<id>","version":"<cli version>"`. Its last 64 KiB (else its
   first 64 KiB) are read, a regular file only.
3. The CLI process (`CLAUDE_PID`, Linux `/proc`): the native binary lives in a folder named
   by its version (`~/.local/share/claude/versions/2.1.332`) or beside the npm package's
   `package.json`.

Unknown: None. `output_field` then answers for a current CLI (see there).
"""

import os
import stat

from memhooks._jsonlite import loads

#: PostToolUse `updatedToolOutput` replaces the output of every tool since this version;
#: before it, `updatedMCPToolOutput` did so for MCP tools only.
UPDATED_TOOL_OUTPUT_SINCE = (2, 1, 121)
_READ = 64 * 1024
_DIGITS = frozenset("0123456789")
_ID_CHARS = frozenset("0123456789abcdefABCDEF-_")


def parse(version) -> tuple | None:
    """'2.1.332' (a suffix after '-' or '+' ignored) -> (2, 1, 332); anything else None."""
    if not isinstance(version, str) or not 0 < len(version) <= 40:
        return None
    core = version.strip().split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) != 3 or not all(p and len(p) <= 6 and set(p) <= _DIGITS for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _read_regular(path: str, tail: bool) -> bytes:
    """Up to 64 KiB from the end (or the start) of a regular file; b'' otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError, TypeError):
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        if tail and st.st_size > _READ:
            os.lseek(fd, st.st_size - _READ, os.SEEK_SET)
        return os.read(fd, _READ)
    except OSError:
        return b""
    finally:
        os.close(fd)


def from_transcript(path, session_id) -> str | None:
    if not isinstance(path, str) or not isinstance(session_id, str) or not path or "\0" in path:
        return None
    if not 0 < len(session_id) <= 100 or not set(session_id) <= _ID_CHARS:
        return None
    needle = ('"sessionId":"' + session_id + '","version":"').encode()
    for tail in (True, False):
        data = _read_regular(path, tail)
        at = data.rfind(needle)
        if at >= 0:
            start = at + len(needle)
            end = data.find(b'"', start, start + 41)
            value = data[start:end].decode("ascii", "replace") if end > 0 else ""
            return value if parse(value) else None
    return None


def _package_version(folder: str) -> str | None:
    data = _read_regular(os.path.join(folder, "package.json"), tail=False)
    if b"claude-code" not in data:
        return None

    try:
        pkg = loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    version = pkg.get("version") if isinstance(pkg, dict) else None
    return version if parse(version) else None


def from_process(pid) -> str | None:
    """The version of the CLI process `pid` (Linux): its binary's folder or package.json."""
    if not isinstance(pid, str) or not pid.isdigit() or len(pid) > 10:
        return None
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    if exe.endswith(" (deleted)"):
        exe = exe[: -len(" (deleted)")]
    name = os.path.basename(exe)
    if parse(name):
        return name  # the native installer: .../claude/versions/<version>
    found = _package_version(os.path.dirname(exe))
    if found or not name.startswith("node"):
        return found
    try:  # an npm install run by node: `node .../@anthropic-ai/claude-code/cli.js`
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read(8192).split(b"\0")
    except OSError:
        return None
    for arg in args[1:4]:
        text = arg.decode("utf-8", "replace")
        if "claude-code" in text and os.path.isabs(text):
            return _package_version(os.path.dirname(text))
    return None


def detect(payload: dict) -> str | None:
    """The CLI version for this hook call, or None (see the module doc)."""
    setting = os.environ.get("MEMHOOKS_CLI_VERSION", "").strip()
    if setting:
        return setting if parse(setting) else None
    got = from_transcript(payload.get("transcript_path"), payload.get("session_id"))
    return got or from_process(os.environ.get("CLAUDE_PID", "").strip())


UPDATED = "updatedToolOutput"
UPDATED_MCP = "updatedMCPToolOutput"
CONTEXT = "additionalContext"
_SETTING = {"updated": UPDATED, "mcp": UPDATED_MCP, "context": CONTEXT}


def output_field(event: str, mcp: bool, version: str | None) -> str:
    """Which PostToolUse output field gives the model a fallback answer:

    * PostToolUseFailure: `additionalContext` (the only output that event takes).
    * `MEMHOOKS_FALLBACK_OUTPUT` = `updated`, `mcp` or `context` forces a field (`mcp` only
      for MCP tools; others then get `additionalContext`); `auto` (default) decides by version:
    * 2.1.121 or later: `updatedToolOutput` (replaces the output of any tool).
    * earlier: `updatedMCPToolOutput` for MCP tools, `additionalContext` for WebFetch.
    * unknown version: `updatedToolOutput` (what every current CLI honours)."""
    if event == "PostToolUseFailure":
        return CONTEXT
    forced = _SETTING.get(os.environ.get("MEMHOOKS_FALLBACK_OUTPUT", "").strip().lower())
    if forced:
        return CONTEXT if forced == UPDATED_MCP and not mcp else forced
    parsed = parse(version)
    if parsed is None or parsed >= UPDATED_TOOL_OUTPUT_SINCE:
        return UPDATED
    return UPDATED_MCP if mcp else CONTEXT
