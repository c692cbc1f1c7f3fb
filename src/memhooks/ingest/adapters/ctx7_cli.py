"""Context7 CLI adapter: a Bash call of `ctx7 library …` / `ctx7 docs …` (npm `ctx7`).

The command is read by memhooks.ctx7_command (None: any other Bash command, never stored).
What the CLI prints (packages/cli/src/commands/docs.ts, 0.5.x; colours only on a terminal,
stripped here anyway):

* `library` text: a blank line, then per result `1. Title: React` and indented
  `Context7-compatible library ID: /facebook/react`, `Description: …`, `Code Snippets: N`,
  `Source Reputation: High|Medium|Low|Unknown`, `Benchmark Score: N`, `Versions: a, b`
  lines, a blank line after each (`Quick command:` follows on a terminal only);
  `--json`: the API's `results` list (`id`, `title`, `description`, `totalSnippets`,
  `trustScore`, `benchmarkScore`, `versions`).
* `docs` text: the API's text answer as it came (the same text as the MCP `query-docs`);
  `--json`: `{codeSnippets: [{codeTitle, codeDescription, codeId, codeList: [{language,
  code}]}], infoSnippets: [{breadcrumb, content}]}`.
* Its own messages: `✖ <error>` (exit 1: an API error, `HTTP error 429`, `fetch failed`,
  `Invalid library ID: …`), `⚠ Library has been redirected` (exit 1), `⚠ No libraries found
  matching "x"` and `⚠ No documentation found for: "q"` (exit 0).

A `library` answer becomes what a `resolve-library-id` answer does (library cards, tier1
for the name, the resolve document), a `docs` answer what a `query-docs` answer does (the
document and its tier2 entry for the ID and query): the Context7 adapter's own rules, error
texts included, on the text in the MCP server's form. Pure: no SQL, no IO.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memhooks.ctx7_command import Ctx7Command, parse
from memhooks.ingest.adapters import context7
from memhooks.ingest.adapters.text import is_persisted_note, stripped_str
from memhooks.ingest.records import AdapterResult

# ANSI colour and cursor sequences (picocolors, ora): CSI parameters then one final byte.
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*+[ -/]*+[@-~]")
_NUMBERED_RE = re.compile(r"[0-9]{1,4}+\.[ \t]++Title:")
MAX_JSON_CHARS = 4 * 1024 * 1024
_CROSS, _WARN = "\u2716", "\u26a0"  # the CLI's log.error / log.warn marks
_SEPARATOR = "\n\n--------------------------------\n\n"
TOOL_OF = {"library": "ctx7 library", "docs": "ctx7 docs"}


def command_of(tool_input: Any) -> Ctx7Command | None:
    """The ctx7 lookup a Bash call's input runs, or None."""
    return parse(tool_input.get("command")) if isinstance(tool_input, dict) else None


def stdout_text(tool_response: Any) -> str:
    """What the command printed on stdout (the Bash tool's `{stdout, stderr, …}`; a plain
    string as it is), colours stripped."""
    if isinstance(tool_response, dict):
        value = tool_response.get("stdout")
    else:
        value = tool_response
    return _ANSI_RE.sub("", value) if isinstance(value, str) else ""


def cli_message(text: str) -> tuple[str, str] | None:
    """The CLI's own message, when the output is one: ("error" | "warning", its text)."""
    stripped = text.strip()
    if stripped.startswith(_CROSS):
        return "error", stripped[1:].strip()
    if stripped.startswith(_WARN) and "\n\n" not in stripped:
        return "warning", stripped[1:].strip()
    return None


def _reputation(score: Any) -> str:
    if not isinstance(score, (int, float)) or isinstance(score, bool) or score < 0:
        return "Unknown"
    return "High" if score >= 7 else "Medium" if score >= 4 else "Low"


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_JSON_CHARS or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


# ---------------------------------------------------------------- library

def _block(fields: list[tuple[str, str]]) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in fields)


def library_json_text(results: list) -> str:
    """The `--json` result list in the MCP server's `resolve-library-id` form."""
    blocks = []
    for lib in results:
        if not isinstance(lib, dict) or not isinstance(lib.get("id"), str):
            continue
        fields = [("Title", str(lib.get("title") or lib["id"])), ("Context7-compatible library ID", lib["id"])]
        if isinstance(lib.get("description"), str) and lib["description"].strip():
            fields.append(("Description", " ".join(lib["description"].split())))
        if isinstance(lib.get("totalSnippets"), int) and lib["totalSnippets"]:
            fields.append(("Code Snippets", str(lib["totalSnippets"])))
        if "trustScore" in lib:
            fields.append(("Source Reputation", _reputation(lib.get("trustScore"))))
        score = lib.get("benchmarkScore")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and score > 0:
            fields.append(("Benchmark Score", str(score)))
        versions = [v for v in lib.get("versions") or [] if isinstance(v, str)]
        if versions:
            fields.append(("Versions", ", ".join(versions)))
        blocks.append(_block(fields))
    return "Available Libraries:\n\n" + "\n----------\n".join(blocks) if blocks else ""


def library_text(text: str) -> str:
    """The text output's numbered results in the MCP server's `resolve-library-id` form."""
    blocks: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        s = line.strip()
        if _NUMBERED_RE.match(s):
            blocks.append([("Title", s.partition("Title:")[2].strip())])
            continue
        if not blocks or not s:
            continue
        key, sep, value = s.partition(":")
        if sep and key and len(key) <= 40 and value.strip():
            blocks[-1].append((key.strip(), value.strip()))
    found = [_block(b) for b in blocks if any(k == "Context7-compatible library ID" for k, _ in b)]
    return "Available Libraries:\n\n" + "\n----------\n".join(found) if found else ""


# ---------------------------------------------------------------- docs

def docs_json_text(ctx: dict) -> str:
    """The `--json` context answer as markdown in the API's text form: one `### title`
    section per snippet, fenced code, joined by the API's separator."""
    parts = []
    for snip in ctx.get("codeSnippets") or []:
        if not isinstance(snip, dict):
            continue
        lines = [f"### {stripped_str(snip.get('codeTitle')) or 'Code example'}"]
        source = stripped_str(snip.get("codeId"))
        if source:
            lines += ["", f"Source: {source}"]
        if stripped_str(snip.get("codeDescription")):
            lines += ["", stripped_str(snip.get("codeDescription"))]
        for code in snip.get("codeList") or []:
            if isinstance(code, dict) and isinstance(code.get("code"), str):
                lang = stripped_str(code.get("language"))
                lines += ["", f"```{lang}", code["code"].rstrip("\n"), "```"]
        parts.append("\n".join(lines))
    for snip in ctx.get("infoSnippets") or []:
        if not isinstance(snip, dict) or not stripped_str(snip.get("content")):
            continue
        head = stripped_str(snip.get("breadcrumb"))
        parts.append((f"### {head}\n\n" if head else "") + snip["content"].strip())
    return _SEPARATOR.join(parts)


# ---------------------------------------------------------------- entry

def adapt(tool_input: Any, tool_response: Any) -> AdapterResult:
    """A Bash PostToolUse event (already routed) -> Context7 records, or a skip reason."""
    cmd = command_of(tool_input)
    if cmd is None:
        return AdapterResult(skip_reason="not a captured tool")  # any other Bash command
    if isinstance(tool_response, dict) and tool_response.get("interrupted") is True:
        return AdapterResult(skip_reason="ctx7: interrupted")
    text = stdout_text(tool_response)
    if is_persisted_note(text):
        return AdapterResult(skip_reason="output persisted to file")
    if not text.strip():
        return AdapterResult(skip_reason="empty content")
    message = cli_message(text)
    if cmd.verb == "library":
        result = _library(cmd, text, message)
    else:
        result = _docs(cmd, text, message)
    for doc in result.documents:
        doc.tool = TOOL_OF[cmd.verb]
        if cmd.base_url:
            doc.metadata["base_url"] = cmd.base_url[:300]
    return result


def _library(cmd: Ctx7Command, text: str, message) -> AdapterResult:
    args = {"libraryName": cmd.target, **({"query": cmd.query} if cmd.query else {})}
    if message is not None:
        kind, said = message
        if kind == "warning" and said.lower().startswith("no libraries found matching"):
            return context7.adapt("resolve-library-id", args, said)  # a negative tier1 entry
        if kind == "error" or not said.lower().startswith("your results only include"):
            reason = context7.error_reason(said) or "request failed"
            return AdapterResult(skip_reason=f"context7 error: {reason}")
    if cmd.json:
        data = _json(text)
        mcp_text = library_json_text(data) if isinstance(data, list) else ""
    else:
        mcp_text = library_text(text)
    if not mcp_text:
        return AdapterResult(skip_reason="context7: unrecognised ctx7 library output")
    return context7.adapt("resolve-library-id", args, mcp_text)


def _docs(cmd: Ctx7Command, text: str, message) -> AdapterResult:
    if message is not None:
        reason = context7.error_reason(message[1]) or (
            "no documentation" if message[1].lower().startswith("no documentation found") else
            "library redirected" if "redirected" in message[1].lower() else "request failed")
        return AdapterResult(skip_reason=f"context7 error: {reason}")
    body = text.strip("\n")
    if cmd.json:
        data = _json(text)
        if not isinstance(data, dict):
            return AdapterResult(skip_reason="context7: unrecognised ctx7 docs output")
        body = docs_json_text(data)
        if not body.strip():
            return AdapterResult(skip_reason="empty content")
    return context7.adapt("query-docs", {"libraryId": cmd.target, "query": cmd.query}, body)
