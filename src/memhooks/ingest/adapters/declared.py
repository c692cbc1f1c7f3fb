"""The adapter of every declared docs source (memhooks.doc_sources): one row says what a
tool's call is keyed by and how its result splits into documents; this reads the result in
the shapes MCP tools answer with (content blocks, a string, the JSON string of
`structuredContent`) and makes the documents. Whether a text is an error is admission's one
verdict (memhooks.classify.document_error), as at every door.

Every document of one call carries the call's key as its `source` (doc_sources.call_source)
and, in its metadata, its place among the call's documents (`part`, `parts`), so a repeated
call can be answered with all of them (memhooks.recall.serve_declared).
"""

from __future__ import annotations

import json
from typing import Any, cast

from memhooks.doc_sources import Row, call_source
from memhooks.ingest.adapters.text import is_persisted_note, is_too_small, response_text_blocks, stripped_str
from memhooks.ingest.records import AdapterResult, DocType, DocumentRecord

MAX_PARTS = 200
MAX_JSON_CHARS = 8 * 1024 * 1024
_UNWRAP_KEYS = ("result", "text", "content")


def _unwrap(text: str) -> str:
    """The text of a JSON-serialised `structuredContent` of one string (`{"result": "…"}`),
    else the text as it is."""
    s = text.strip()
    if not s.startswith("{") or len(s) > MAX_JSON_CHARS:
        return text
    try:
        obj = json.loads(s)
    except (ValueError, RecursionError):
        return text
    if isinstance(obj, dict) and isinstance(obj.get("structuredContent"), dict):
        obj = obj["structuredContent"]
    if isinstance(obj, dict) and 0 < len(obj) <= 3:
        for key in _UNWRAP_KEYS:
            if isinstance(obj.get(key), str):
                return obj[key]
    return text


def _is_url(value: str) -> bool:
    low = value[:8].lower()
    return low.startswith(("http://", "https://")) and not any(c.isspace() for c in value)


def _sections(text: str, heading: str) -> list[tuple[str | None, str]]:
    """(title, text) of each section: a new one at every line that starts with `heading`
    outside a code fence; text before the first heading is a section without a title."""
    if heading.strip() != "#" and heading in text:
        # a marker of the server's own (DeepWiki's `# Page: `) may follow a page's last line
        # on the same line: it opens a section wherever it is
        text = text.replace(heading, "\n" + heading)
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    fence = ""
    for line in text.split("\n"):
        s = line.lstrip()
        if fence:
            if s.startswith(fence):
                fence = ""
        elif s.startswith(("```", "~~~")):
            fence = s[:3]
        elif line.startswith(heading) and len(out) < MAX_PARTS:
            title = line[len(heading):].strip().lstrip("#").strip() or None
            out.append((title, [line]))
            continue
        out[-1][1].append(line)
    return [(title, "\n".join(lines).strip()) for title, lines in out]


def _json_items(text: str, fields: dict) -> list[tuple[str | None, str | None, str]] | None:
    """(title, url, text) of each object of a JSON list (or of the first list value of an
    object); None when the text is not such a list."""
    s = text.strip()
    if not s.startswith(("[", "{")) or len(s) > MAX_JSON_CHARS:
        return None
    try:
        value = json.loads(s)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        value = next((v for v in value.values() if isinstance(v, list)), None)
    if not isinstance(value, list):
        return None
    out = []
    for item in value[:MAX_PARTS]:
        if not isinstance(item, dict):
            continue
        body = item.get(fields["text"])
        if not isinstance(body, str):
            continue
        title = stripped_str(item.get(fields["title"])) or None
        url = stripped_str(item.get(fields["url"])) or None
        out.append((title, url if url and _is_url(url) else None, body))
    return out


def adapt(row: Row, server: str, tool: str, tool_input: dict, tool_response: Any) -> AdapterResult:
    if isinstance(tool_response, dict) and (tool_response.get("isError") is True):
        return AdapterResult(skip_reason=f"{row.name}: error result")
    source = call_source(row, server, tool, tool_input)
    if source is None:
        return AdapterResult(skip_reason=f"{row.name}: the call has no key")
    blocks = [_unwrap(b) for b in response_text_blocks(tool_response) if isinstance(b, str)]
    text = "\n\n".join(b for b in blocks if b.strip())
    if is_too_small(text):
        return AdapterResult(skip_reason="empty content")
    if is_persisted_note(text):
        return AdapterResult(skip_reason="output saved to a file")
    asked = {k: tool_input.get(k) for k in row.key if isinstance(tool_input.get(k), (str, int, float))}
    url = stripped_str(tool_input.get(row.url)) if row.url else ""
    page_url = url if url and _is_url(url) else None
    label = page_url or " ".join(f"{v}" for v in asked.values()) or tool
    parts: list[tuple[str | None, str | None, str]]
    if row.split == "sections":
        parts = [(t, page_url, body) for t, body in _sections(text, row.heading)]
    elif row.split == "json-list":
        got = _json_items(text, row.fields)
        parts = got if got is not None else [(None, page_url, text)]
    else:
        parts = [(None, page_url, text)]
    parts = [p for p in parts if not is_too_small(p[2])]
    if not parts:
        return AdapterResult(skip_reason="empty content")
    meta_base: dict[str, Any] = {"server": server, "tool_name": tool, "parts": len(parts)}
    if asked:
        meta_base["args"] = asked
    docs = []
    for i, (title, doc_url, body) in enumerate(parts):
        docs.append(DocumentRecord(
            source=source, source_tool=row.name, tool=tool,
            title=f"{label} — {title}" if title else label,
            content=body, type=cast(DocType, row.type), url=doc_url, metadata={**meta_base, "part": i},
        ))
    return AdapterResult(documents=docs, source_tool=row.name)
