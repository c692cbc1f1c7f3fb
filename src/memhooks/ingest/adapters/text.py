"""What a tool response says, as text: the content blocks in every shape seen, and the
"too small to be a document" and "saved to a file" rules the adapters share."""

from __future__ import annotations

import json
import re
from typing import Any

# Shared "too small to be a document" rule: stripped content shorter than this.
MIN_DOC_CHARS = 20

# Claude Code replaces a too-large tool output by a note pointing at a file.
_PERSISTED_RE = re.compile(
    r"<persisted-output>|full output (?:has been )?saved to\s*+:?\s*+\S", re.IGNORECASE
)


def stripped_str(value: Any) -> str:
    """A string stripped, anything else ''."""
    return value.strip() if isinstance(value, str) else ""


def is_too_small(text: Any) -> bool:
    """True when *text* is not a string or is too short to be a document."""
    return not isinstance(text, str) or len(text.strip()) < MIN_DOC_CHARS


# ---------------------------------------------------------------- responses

def response_text_blocks(tool_response: Any) -> list[str]:
    """Text blocks of an MCP ``tool_response`` in any of the shapes seen.

    A list of content blocks (text kept, images and other types skipped), a
    plain string, a JSON string (of a block list, of ``{"content": [...]}``,
    of ``{"structuredContent": ...}``, of an arbitrary value: then the string
    is kept as is), an object with a ``content`` list, anything else -> [].
    Never raises.
    """
    try:
        return _blocks(tool_response, depth=0)
    except Exception:  # noqa: BLE001 - hostile tool output must never break ingestion  # pragma: no cover
        return []


def _blocks(value: Any, depth: int) -> list[str]:
    if depth > 4:
        return []
    if isinstance(value, str):
        return _blocks_from_string(value, depth)
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                btype = item.get("type")
                text = item.get("text")
                if (btype == "text" or btype is None) and isinstance(text, str):
                    out.append(text)
                elif btype == "resource" and isinstance(item.get("resource"), dict):
                    rtext = item["resource"].get("text")
                    if isinstance(rtext, str):
                        out.append(rtext)
        return out
    if isinstance(value, dict):
        if isinstance(value.get("content"), list):
            return _blocks(value["content"], depth + 1)
        if isinstance(value.get("content"), str):
            return [value["content"]]
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            return [value["text"]]
        sc = value.get("structuredContent")
        if isinstance(sc, str):
            return [sc]
        if isinstance(sc, dict):
            for key in ("text", "result", "content"):
                if isinstance(sc.get(key), str):
                    return [sc[key]]
            try:
                return [json.dumps(sc, ensure_ascii=False)]
            except (TypeError, ValueError):
                return []
        return []
    return []


def _blocks_from_string(text: str, depth: int) -> list[str]:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return [text]
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        return [text]
    if isinstance(parsed, list):
        if parsed and all(_is_block(b) for b in parsed):
            return _blocks(parsed, depth + 1)
        return [text]
    if isinstance(parsed, dict):
        if isinstance(parsed.get("content"), list) and all(
            _is_block(b) for b in parsed["content"]
        ):
            return _blocks(parsed["content"], depth + 1)
        if _is_block(parsed):
            return [parsed["text"]]
        if "structuredContent" in parsed and len(parsed) <= 3:
            got = _blocks({"structuredContent": parsed["structuredContent"]}, depth + 1)
            if got:
                return got
    return [text]


def _is_block(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and (value.get("type") != "text" or isinstance(value.get("text"), str))
    )


def response_text(tool_response: Any) -> str:
    """All text blocks joined by a blank line."""
    return "\n\n".join(b for b in response_text_blocks(tool_response) if b)


def is_persisted_note(text: str) -> bool:
    """Claude Code's "large output was saved to a file" replacement note."""
    return len(text) < 8000 and bool(_PERSISTED_RE.search(text))
