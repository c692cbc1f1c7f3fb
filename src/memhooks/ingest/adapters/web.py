"""Built-in WebFetch and WebSearch adapter.

WebFetch: ``tool_input`` ``{url, prompt}``; ``tool_response`` ``{bytes, code,
codeText, result, durationMs, url}`` where ``result`` is the model's answer to
``prompt`` about the page (not the raw page).

WebSearch: ``tool_response`` ``{query, results: [{tool_use_id, content:
[{title, url}, …]} | "summary text", …], durationSeconds}``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from memhooks import classify as errors
from memhooks.ingest.adapters.text import is_too_small, stripped_str
from memhooks.ingest.records import AdapterResult, DocumentRecord
from memhooks.toolargs import webfetch_offset


def adapt(tool: str, tool_input: dict, tool_response: Any) -> AdapterResult:
    if tool == "WebFetch":
        return adapt_webfetch(tool_input, tool_response)
    if tool == "WebSearch":
        return adapt_websearch(tool_input, tool_response)
    return AdapterResult(skip_reason="not a captured tool")




def url_title(url: str) -> str:
    """``https://example.org/a/b/?q=1`` -> ``example.org/a/b``."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rsplit("@", 1)[-1].lower()  # no credentials; .port raises on junk
    except ValueError:
        return url
    path = parts.path.rstrip("/")
    return (host + path) or url


# ---------------------------------------------------------------- WebFetch

def adapt_webfetch(tool_input: dict, tool_response: Any) -> AdapterResult:
    response = tool_response if isinstance(tool_response, dict) else {}
    raw = tool_response if isinstance(tool_response, str) else response.get("result")
    result = raw if isinstance(raw, str) else ""
    url = stripped_str(tool_input.get("url")) or stripped_str(response.get("url"))
    code = response.get("code")
    if isinstance(code, bool) or not isinstance(code, (int, float)):
        code = None
    if not result.strip():
        return AdapterResult(skip_reason="empty content")
    if not url:
        return AdapterResult(skip_reason="webfetch: missing url")
    if code is not None and code >= 400:
        return AdapterResult(skip_reason=f"webfetch: http {int(code)}")
    if (code is not None and 300 <= code < 400) or result.lstrip().startswith("REDIRECT DETECTED"):
        return AdapterResult(skip_reason="webfetch: redirect")
    if is_too_small(result):
        return AdapterResult(skip_reason="empty content")
    reason = errors.webfetch_error(result)
    if reason is not None:
        return AdapterResult(skip_reason=f"webfetch error: {reason}")
    metadata: dict[str, Any] = {"prompt": stripped_str(tool_input.get("prompt"))}
    # Part of the key: a page read from another offset is another answer (serving compares it).
    offset = webfetch_offset(tool_input)
    metadata["offset"] = offset if offset is not None else f"invalid: {str(tool_input.get('offset'))[:40]}"
    if code is not None:
        metadata["code"] = int(code)
    size = response.get("bytes")
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        metadata["bytes"] = int(size)
    code_text = stripped_str(response.get("codeText"))
    if code_text:
        metadata["code_text"] = code_text
    final_url = stripped_str(response.get("url"))
    if final_url and final_url != url:
        metadata["final_url"] = final_url
    doc = DocumentRecord(
        source=url,
        source_tool="webfetch",
        tool="WebFetch",
        title=url_title(url),
        content=result,
        type="web-page",
        url=url,
        metadata=metadata,
    )
    return AdapterResult(documents=[doc])


# ---------------------------------------------------------------- WebSearch

def adapt_websearch(tool_input: dict, tool_response: Any) -> AdapterResult:
    response = tool_response if isinstance(tool_response, dict) else {}
    query = stripped_str(response.get("query")) or stripped_str(tool_input.get("query"))
    links: list[tuple[str, str]] = []
    summaries: list[str] = []
    results = response.get("results")
    if isinstance(tool_response, str):
        results = [tool_response]
    if isinstance(results, list):
        for item in results:
            if isinstance(item, str):
                if item.strip() and errors.short_error(item) is None:
                    summaries.append(item.strip())
            elif isinstance(item, dict):
                content = item.get("content")
                if isinstance(content, list):
                    for hit in content:
                        if isinstance(hit, dict):
                            url = stripped_str(hit.get("url"))
                            if url:
                                links.append((stripped_str(hit.get("title")), url))
    if not links and is_too_small("\n\n".join(summaries)):
        return AdapterResult(skip_reason="websearch: no results")
    if not query:
        return AdapterResult(skip_reason="websearch: missing query")
    seen: set[str] = set()
    unique: list[tuple[str, str]] = []
    for title, url in links:
        if url not in seen:
            seen.add(url)
            unique.append((title, url))
    parts = [query]
    if unique:
        parts.append("\n".join(f"- {title or url_title(url)} — {url}" for title, url in unique))
    parts.extend(summaries)
    content = "\n\n".join(parts)
    metadata: dict[str, Any] = {"query": query, "urls": [u for _, u in unique]}
    for key in ("allowed_domains", "blocked_domains"):
        value = tool_input.get(key)
        if isinstance(value, list) and value:
            metadata[key] = [v for v in value if isinstance(v, str)]
    doc = DocumentRecord(
        source=f"websearch:{query}",
        source_tool="websearch",
        tool="WebSearch",
        title=query,
        content=content,
        type="search-results",
        metadata=metadata,
    )
    return AdapterResult(documents=[doc])
