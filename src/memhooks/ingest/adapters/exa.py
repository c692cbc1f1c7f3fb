"""EXA adapter: one document per search result or fetched page.

Text formats follow exa-mcp-server 3.x:

* ``web_search_exa``: per result ``Title:``/``URL:``/``Published:``/``Author:``
  then ``Highlights:\\n…`` or ``Text: …``; results joined by ``\\n\\n---\\n\\n``.
  Older 3.1.x returned Exa's single ``context`` string instead.
* ``get_code_context_exa``: ``Title:``/``URL:``/``Code/Highlights:`` (or
  ``Text:``) blocks with the same separator.
* ``web_fetch_exa`` / ``crawling_exa``: per page ``# Title``, ``URL: …``,
  optional ``Published:``/``Author:``, blank line, text; failures as
  ``Error fetching <url>: <tag>`` lines. Older ``crawling_exa`` returned
  ``JSON.stringify`` of the /contents response.
* ``web_search_advanced_exa``: ``JSON.stringify`` of the search response
  (``results[]`` with title, url, text, highlights, summary).

Page fetches (``web_fetch_exa`` / ``crawling_exa``) are split in memhooks.ingest.adapters.
exa_fetch: at most one document per URL asked, never trusting structure inside a page.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memhooks import classify as errors
from memhooks.ingest.adapters.exa_fetch import FETCH_ERROR_RE as _FETCH_ERROR_RE
from memhooks.ingest.adapters.exa_fetch import FETCH_TOOLS, SOURCE_TOOL, adapt_fetch
from memhooks.ingest.adapters.exa_fetch import clean as _clean
from memhooks.ingest.adapters.exa_fetch import meta_of as _meta
from memhooks.ingest.adapters.text import is_persisted_note, is_too_small, response_text
from memhooks.ingest.records import AdapterResult, DocType, DocumentRecord

RESULT_SEPARATOR = "\n\n---\n\n"

TOOL_TYPES: dict[str, DocType] = {
    "web_search_exa": "search-results",
    "web_search_advanced_exa": "search-results",
    "get_code_context_exa": "code-context",
    "web_fetch_exa": "web-page",
    "crawling_exa": "web-page",
}

_PAGE_HEADER_RE = re.compile(r"^# (?P<title>[^\n]*)\nURL: (?P<url>[^\n]*)$", re.MULTILINE)
_BLOCK_KEY_RE = re.compile(r"^(Title|URL|Published|Author|Summary|Score|ID):[ \t]?(.*)$")
_BODY_KEY_RE = re.compile(r"^(Highlights|Code/Highlights|Text|Content|Code):[ \t]?(.*)$")

_NO_RESULT_PREFIXES = (
    "no search results found",
    "no content found",
    "no code snippets or documentation found",
    "no results found",
    "no contents found",
)
_ERROR_RE = re.compile(
    r"^(?:(?:advanced )?search error|crawling error|error fetching url\(s\)|"
    r"error:|you'?ve hit exa'?s free mcp rate limit|rate limit)",
    re.IGNORECASE,
)


def adapt(tool: str, tool_input: dict, tool_response: Any) -> AdapterResult:
    """EXA PostToolUse event (already routed) -> records."""
    text = response_text(tool_response)
    stripped = text.strip()
    if not stripped:
        return AdapterResult(skip_reason="empty content")
    if is_persisted_note(text):
        return AdapterResult(skip_reason="output persisted to file")
    low = stripped.lower()
    if len(stripped) < 1000:
        if low.startswith(_NO_RESULT_PREFIXES):
            return AdapterResult(skip_reason="exa: no results")
        if _ERROR_RE.match(stripped):
            return AdapterResult(skip_reason="exa error")

    query = _query(tool_input)
    known = tool in TOOL_TYPES
    doc_type = TOOL_TYPES.get(tool, "search-results")

    docs: list[DocumentRecord] = []
    failed: list[str] = []
    parsed_json = _json_object(stripped)
    json_results = parsed_json.get("results") if parsed_json is not None else None
    if tool in FETCH_TOOLS:
        return adapt_fetch(stripped, tool, tool_input, query, json_results)
    if isinstance(json_results, list):
        docs = _from_json(json_results, tool, doc_type, query)
    elif not known and _PAGE_HEADER_RE.search(stripped):
        docs, failed = _from_pages(stripped, tool, doc_type if known else "web-page", query)
    if not docs and not failed and not isinstance(json_results, list):
        blocks = _result_blocks(stripped)
        if blocks is not None:
            docs = [
                d
                for rank, b in enumerate(blocks)
                if (d := _block_document(b, tool, doc_type, query, rank)) is not None
            ]
        elif tool in ("web_search_exa", "get_code_context_exa") or (not known and query):
            # 3.1.x: one Exa "context" string for the whole search
            if not is_too_small(stripped) and query and errors.short_error(stripped) is None and (
                len(stripped) >= errors.SHORT_CHARS or "http" in stripped or "Title:" in stripped
            ):
                docs = [
                    DocumentRecord(
                        source=query,
                        source_tool=SOURCE_TOOL,
                        tool=tool,
                        title=query,
                        content=stripped,
                        type=doc_type,
                        metadata={"query": query, "format": "context"},
                    )
                ]
    if docs:
        return AdapterResult(documents=docs)
    if failed:
        return AdapterResult(skip_reason="exa: fetch failed")
    if is_too_small(stripped):
        return AdapterResult(skip_reason="empty content")
    reason = errors.short_error(stripped)
    if reason is not None:
        return AdapterResult(skip_reason=f"exa error: {reason}")
    return AdapterResult(skip_reason="exa: unrecognised output")


# ---------------------------------------------------------------- helpers

def _query(tool_input: dict) -> str:
    for key in ("query", "q", "objective"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _json_object(text: str) -> dict | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("data"), dict) and "results" not in value:
        value = value["data"]
    return value if isinstance(value, dict) else None


def _from_json(results: list, tool: str, doc_type: DocType, query: str) -> list[DocumentRecord]:
    docs: list[DocumentRecord] = []
    for rank, r in enumerate(results):
        if not isinstance(r, dict):
            continue
        url = _clean(r.get("url")) or (_clean(r.get("id")) if _clean(r.get("id")).startswith("http") else "")
        if not url:
            continue
        text = _clean(r.get("text"))
        summary = _clean(r.get("summary"))
        highlights = [h.strip() for h in r.get("highlights") or [] if isinstance(h, str) and h.strip()]
        if text:
            content = text
        else:
            content = "\n\n".join(([summary] if summary else []) + highlights)
        if is_too_small(content):
            continue
        published = _clean(r.get("publishedDate"))
        docs.append(
            DocumentRecord(
                source=url,
                source_tool=SOURCE_TOOL,
                tool=tool,
                title=_clean(r.get("title")) or None,
                content=content,
                type=doc_type,
                url=url,
                metadata=_meta(
                    query,
                    published=published,
                    author=_clean(r.get("author")),
                    summary=summary if text else "",
                    highlights=highlights if text else [],
                    rank=rank,
                ),
            )
        )
    return docs


def _from_pages(
    text: str, tool: str, doc_type: DocType, query: str
) -> tuple[list[DocumentRecord], list[str]]:
    headers = list(_PAGE_HEADER_RE.finditer(text))
    failed: list[str] = []
    docs: list[DocumentRecord] = []
    # error lines before the first page (or with no page at all)
    preamble = text[: headers[0].start()] if headers else text
    failed.extend(_error_lines(preamble.splitlines()))
    for i, m in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        body_lines = text[m.end():end].split("\n")
        if body_lines and body_lines[0] == "":
            body_lines = body_lines[1:]
        published = author = ""
        while body_lines and body_lines[0].startswith(("Published: ", "Author: ")):
            line = body_lines.pop(0)
            if line.startswith("Published: "):
                published = line[len("Published: "):].strip()
            else:
                author = line[len("Author: "):].strip()
        # trailing "Error fetching <url>: <tag>" lines belong to no page
        while body_lines and (not body_lines[-1].strip() or _FETCH_ERROR_RE.match(body_lines[-1])):
            line = body_lines.pop()
            em = _FETCH_ERROR_RE.match(line)
            if em:
                failed.append(em.group(1))
        content = "\n".join(body_lines).strip()
        url = m.group("url").strip()
        if not url or is_too_small(content):
            continue
        if len(content) < 600 and errors.strong_error(content):
            failed.append(url)  # the page fetched was an error page
            continue
        title = m.group("title").strip()
        docs.append(
            DocumentRecord(
                source=url,
                source_tool=SOURCE_TOOL,
                tool=tool,
                title=None if title in ("", "(no title)") else title,
                content=content,
                type=doc_type,
                url=url,
                metadata=_meta(query, published=published, author=author),
            )
        )
    return docs, failed


def _error_lines(lines: list[str]) -> list[str]:
    return [m.group(1) for line in lines if (m := _FETCH_ERROR_RE.match(line))]


def _result_blocks(text: str) -> list[str] | None:
    """Split a Title/URL result list; None when the text is not one."""
    chunks = text.split(RESULT_SEPARATOR)
    blocks: list[str] = []
    for chunk in chunks:
        if _is_result_start(chunk):
            blocks.append(chunk)
        elif blocks:
            # a "---" rule inside a result's own text: glue it back
            blocks[-1] = blocks[-1] + RESULT_SEPARATOR + chunk
        else:
            return None
    if not blocks:
        return None
    if len(blocks) == 1 and sum(1 for ln in text.splitlines() if ln.startswith("URL: ")) > 1:
        return None  # several results without our separator: a context string
    return blocks


def _is_result_start(chunk: str) -> bool:
    lines = chunk.lstrip("\n").split("\n", 3)
    return (
        len(lines) >= 2
        and lines[0].startswith("Title:")
        and any(ln.startswith("URL:") for ln in lines[1:3])
    )


def _block_document(
    block: str, tool: str, doc_type: DocType, query: str, rank: int
) -> DocumentRecord | None:
    fields: dict[str, str] = {}
    lines = block.strip("\n").split("\n")
    i = 0
    while i < len(lines):
        m = _BLOCK_KEY_RE.match(lines[i])
        if not m:
            break
        fields.setdefault(m.group(1).lower(), m.group(2).strip())
        i += 1
    body_lines = lines[i:]
    if body_lines:
        bm = _BODY_KEY_RE.match(body_lines[0])
        if bm:
            body_lines = ([bm.group(2)] if bm.group(2).strip() else []) + body_lines[1:]
    content = "\n".join(body_lines).strip()
    url = _clean(fields.get("url"))
    if not url or is_too_small(content):
        return None
    return DocumentRecord(
        source=url,
        source_tool=SOURCE_TOOL,
        tool=tool,
        title=_clean(fields.get("title")) or None,
        content=content,
        type=doc_type,
        url=url,
        metadata=_meta(
            query,
            published=_clean(fields.get("published")),
            author=_clean(fields.get("author")),
            summary=_clean(fields.get("summary")),
            rank=rank,
        ),
    )
