"""Claude Code session transcripts -> hook-shaped tool calls (standard library only).

A transcript is JSON Lines under ``~/.claude/projects/<project-key>/<session>.jsonl``
(``$CLAUDE_CONFIG_DIR/projects`` when that is set; subagents write more files below the
session's folder). The lines memhooks reads:

* ``{"type": "assistant", "message": {"content": [{"type": "tool_use", "id", "name",
  "input"}, …]}, "sessionId", "cwd", "timestamp"}``: the model calls a tool;
* ``{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id",
  "content", "is_error"?}, …]}, "toolUseResult": …, "timestamp"}``: its result.
  ``toolUseResult`` is the structured result, the same value a PostToolUse hook gets as
  ``tool_response`` (a list of content blocks for MCP tools, an object for WebFetch and
  WebSearch); for a failure it is a string (``"Error: …"``). A permission denial is a
  failed result, with ``permissionDecision.decision == "reject"`` on the line.

Every other line (attachments, API request records, summaries, queue operations, lines
cut short by a crash) is skipped and counted; nothing here raises on odd input.

The reader streams: it holds one line at a time (a line longer than ``max_line_bytes`` is
skipped without being held) and the tool_use ids waiting for their result in a bounded
dict (the oldest are dropped, and counted, beyond ``max_pending``).
"""

from __future__ import annotations

import json
import os
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memhooks.ctx7_command import parse as parse_ctx7
from memhooks.tools import TOOL_MATCHER

MAX_LINE_BYTES = 16 * 1024 * 1024  # the journal's own payload cap
MAX_PENDING = 4096
_CHUNK = 1024 * 1024

_DENIAL_RE = re.compile(
    r"requested permissions to use|haven't granted it yet|doesn't want to proceed with this tool use"
    r"|tool use was rejected|permission to use .{0,200} (?:has been|was) denied",
    re.IGNORECASE,
)


_MATCHER: re.Pattern[str] | None = None  # compiled on first use


def captured_tool(name, tool_input=None) -> bool:
    """Whether a call is one memhooks captures (the PostToolUse matcher of its hooks): a Bash
    call only when its command is a Context7 CLI lookup (`ctx7 library|docs …`), as the
    hooks decide it."""
    global _MATCHER
    if _MATCHER is None:
        _MATCHER = re.compile(TOOL_MATCHER)
    if name == "Bash":
        return isinstance(tool_input, dict) and parse_ctx7(tool_input.get("command")) is not None
    return isinstance(name, str) and _MATCHER.search(name) is not None


def transcript_roots(env: Mapping[str, str] | None = None) -> list[str]:
    """Where Claude Code keeps transcripts: ``$CLAUDE_CONFIG_DIR/projects`` when set, and
    ``~/.claude/projects``."""
    environ = os.environ if env is None else env
    roots = []
    config = (environ.get("CLAUDE_CONFIG_DIR") or "").strip()
    if config:
        roots.append(os.path.join(os.path.expanduser(config), "projects"))
    roots.append(os.path.join(os.path.expanduser("~"), ".claude", "projects"))
    out = []
    for r in roots:
        real = os.path.realpath(r)
        if real not in out:
            out.append(real)
    return out


def find_transcripts(paths: list[str] | None = None, env: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(``*.jsonl`` files, names given that do not exist). A directory is walked (no symlinked
    folders); a file is taken as it is. Default: the transcript roots. Sorted, no duplicates."""
    missing: list[str] = []
    found: dict[str, None] = {}
    for p in paths or transcript_roots(env):
        if os.path.isfile(p):
            found[os.path.realpath(p)] = None
        elif os.path.isdir(p):
            for folder, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    full = os.path.join(folder, name)
                    if name.endswith(".jsonl") and os.path.isfile(full) and not os.path.islink(full):
                        found[os.path.realpath(full)] = None
        elif paths:
            missing.append(p)
    return list(found), missing


@dataclass
class ToolCall:
    """One captured tool's call and result, as a PostToolUse hook would have seen it."""

    session_id: str
    tool_use_id: str
    tool_name: str
    tool_input: dict
    cwd: str | None
    at: float | None  # epoch seconds of the result (else of the call)
    transcript_path: str
    line: int
    tool_response: object = None
    error: str | None = None  # set for a failure (PostToolUseFailure)
    denied: bool = False

    @property
    def failed(self) -> bool:
        return self.error is not None

    def payload(self, imported_at: float | None = None) -> dict:
        """The hook payload: PostToolUse, or PostToolUseFailure for an error."""
        base: dict[str, object] = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": self.cwd or "",
            "hook_event_name": "PostToolUseFailure" if self.failed else "PostToolUse",
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "tool_use_id": self.tool_use_id,
        }
        if self.failed:
            base["error"] = self.error
            base["is_interrupt"] = False
        else:
            base["tool_response"] = self.tool_response
        mark: dict[str, object] = {"source": "transcript", "line": self.line}
        if self.at is not None:
            mark["at"] = self.at
        if imported_at is not None:
            mark["imported_at"] = imported_at
        base["memhooks_import"] = mark
        return base


@dataclass
class ReadStats:
    bytes_read: int = 0
    lines: int = 0
    bad_lines: int = 0  # not JSON (cut short, binary), or not an object
    long_lines: int = 0  # over max_line_bytes, skipped unread
    unknown_shapes: int = 0  # a message/tool block that is not the shape described above
    tool_uses: int = 0  # tool_use blocks of captured tools
    results: int = 0  # of those, paired with their result
    failures: int = 0
    denials: int = 0
    unanswered: int = 0  # captured tool_use with no result in the file
    evicted: int = 0  # dropped from the pending dict (bound reached)
    sessions: set = field(default_factory=set)

    def add(self, other: ReadStats) -> None:
        for k, v in vars(other).items():
            if k == "sessions":
                self.sessions |= v
            else:
                setattr(self, k, getattr(self, k) + v)


def parse_time(value) -> float | None:
    """ISO 8601 (``2026-01-02T03:04:05.678Z``) or epoch (s or ms) -> epoch seconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        v = float(value)
        return v / 1000 if v > 1e11 else v
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _lines(fh, max_line: int, stats: ReadStats):
    """(line number, bytes) of each line; a line over max_line is skipped unread."""
    number = 0
    while True:
        line = fh.readline(max_line + 1)
        if not line:
            return
        number += 1
        stats.bytes_read += len(line)
        if len(line) > max_line and not line.endswith(b"\n"):
            stats.long_lines += 1
            while True:  # drain the rest of the long line in chunks
                rest = fh.readline(_CHUNK)
                stats.bytes_read += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            continue
        yield number, line


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content
                         if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _error_text(block: dict, structured) -> str:
    if isinstance(structured, str) and structured.strip():
        text = structured.strip()
    else:
        text = _text_of(block.get("content")).strip()
    return text[:4000] or "tool error"


def read_transcript(fh, path: str, stats: ReadStats, *, max_line_bytes: int = MAX_LINE_BYTES,
                    max_pending: int = MAX_PENDING, wanted=captured_tool, tick=None):
    """Yield a ToolCall for each captured tool_use paired with its tool_result.
    `fh` is a binary file; `path` is what the payload names as its transcript;
    `tick(bytes_read)` is called every few hundred lines."""
    pending: OrderedDict = OrderedDict()
    # Claude Code names the file after the session: the fallback for a line without sessionId.
    stem = os.path.basename(path)
    stem = stem[:-len(".jsonl")] if stem.endswith(".jsonl") else ""
    file_session = stem if stem and not stem.startswith("agent-") else None
    for number, raw in _lines(fh, max_line_bytes, stats):
        if tick is not None and number % 256 == 0:
            tick(stats.bytes_read)
        if not raw.strip():
            continue
        stats.lines += 1
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError):
            stats.bad_lines += 1
            continue
        if not isinstance(row, dict):
            stats.bad_lines += 1
            continue
        kind = row.get("type")
        if kind not in ("assistant", "user"):
            continue
        message = row.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            continue  # a plain prompt or answer
        if not isinstance(content, list):
            stats.unknown_shapes += 1
            continue
        session = row.get("sessionId")
        session = session if isinstance(session, str) and session else file_session
        cwd = row.get("cwd") if isinstance(row.get("cwd"), str) else None
        at = parse_time(row.get("timestamp"))
        if kind == "assistant":
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                name, tid = block.get("name"), block.get("id")
                if not wanted(name, block.get("input")):
                    continue
                if not isinstance(tid, str) or not tid or session is None:
                    stats.unknown_shapes += 1
                    continue
                stats.tool_uses += 1
                tool_input = block.get("input")
                pending[tid] = (name, tool_input if isinstance(tool_input, dict) else {},
                                session, cwd, at)
                pending.move_to_end(tid)
                while len(pending) > max_pending:
                    pending.popitem(last=False)
                    stats.evicted += 1
            continue
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if not results:
            continue
        structured = row.get("toolUseResult") if len(results) == 1 else None
        rejected = (isinstance(row.get("permissionDecision"), dict)
                    and row["permissionDecision"].get("decision") in ("reject", "deny"))
        for block in results:
            tid = block.get("tool_use_id")
            call = pending.pop(tid, None) if isinstance(tid, str) else None
            if call is None or not isinstance(tid, str):  # (a call implies a str id)
                continue  # not a captured tool, or its call was not in this file
            name, tool_input, use_session, use_cwd, use_at = call
            tc = ToolCall(session_id=session or use_session, tool_use_id=tid, tool_name=name,
                          tool_input=tool_input, cwd=cwd or use_cwd, at=at or use_at,
                          transcript_path=path, line=number)
            if block.get("is_error") is True:
                tc.error = _error_text(block, structured)
                tc.denied = rejected or bool(_DENIAL_RE.search(tc.error[:500]))
                stats.failures += 1
                stats.denials += int(tc.denied)
            else:
                tc.tool_response = _response(name, tool_input, block, structured)
                if tc.tool_response is None:
                    stats.unknown_shapes += 1
                    continue
            stats.results += 1
            stats.sessions.add(tc.session_id)
            yield tc
    stats.unanswered += len(pending)


def _response(name: str, tool_input: dict, block: dict, structured):
    """The hook's tool_response: the structured result when the line has one, else rebuilt
    from the tool_result content."""
    content = block.get("content")
    if name == "Bash":  # the Bash tool's own {stdout, stderr, interrupted, isImage}, as a hook gets it
        if isinstance(structured, dict) and isinstance(structured.get("stdout"), str):
            return structured
        text = _text_of(content)
        return {"stdout": text, "stderr": "", "interrupted": False, "isImage": False} if text.strip() else None
    if name in ("WebFetch", "WebSearch"):
        if isinstance(structured, dict):
            return structured
        text = _text_of(content)
        if not text.strip():
            return None
        if name == "WebFetch":
            return {"result": text, "url": tool_input.get("url")}
        return {"query": tool_input.get("query"), "results": [text]}
    if isinstance(structured, (list, str)) and structured:
        return structured
    if isinstance(structured, dict) and isinstance(structured.get("content"), list):
        return structured["content"]
    if isinstance(content, (list, str)) and content:
        return content
    return None
