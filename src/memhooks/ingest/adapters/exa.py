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

A page fetch never trusts structure inside a page: it yields at most one document per URL
the agent asked for (``urls`` / ``url`` in the tool input), keyed by that URL, and a
``# Title`` / ``URL:`` block inside a page is page text. The response holds one section per
fetched URL, in the order asked; it is split only where a header block names an asked URL
(each once, in order). When a page's text holds a header block for an asked URL, the split
is ambiguous: a section whose start or end is not certain is stored for no URL (see
``_fetch_sections``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from memhooks.ingest.adapters import errors
from memhooks.ingest.adapters.text import is_persisted_note, is_too_small, response_text
from memhooks.ingest.records import AdapterResult, DocumentRecord
from memhooks.toolargs import EXA_KEYED_BY as KEYED_BY
from memhooks.toolargs import exa_fetch_urls

SOURCE_TOOL = "exa"

RESULT_SEPARATOR = "\n\n---\n\n"

TOOL_TYPES = {
    "web_search_exa": "search-results",
    "web_search_advanced_exa": "search-results",
    "get_code_context_exa": "code-context",
    "web_fetch_exa": "web-page",
    "crawling_exa": "web-page",
}

FETCH_TOOLS = ("web_fetch_exa", "crawling_exa")

_PAGE_HEADER_RE = re.compile(r"^# (?P<title>[^\n]*)\nURL: (?P<url>[^\n]*)$", re.MULTILINE)
# A page fetch's header block where the server writes one (at the start of the text or after
# a blank line): `# title`, `URL: u`, optional `Published:` / `Author:` lines, then a blank line
# (or the end). Possessive repetition: linear on hostile text.
# (Where it starts is checked by the caller: a literal first makes the scan fast.)
_FETCH_HEAD_RE = re.compile(
    r"# (?P<title>[^\n]*+)\nURL: (?P<url>[^\n]*+)"
    r"(?P<meta>(?:\n(?:Published|Author): [^\n]*+)*+)(?:\n\n|\Z)"
)
_FETCH_ERROR_RE = re.compile(r"^Error fetching (\S+): (.+)$")
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
_NA = ("", "N/A", "n/a", "null", "undefined")


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
        return _adapt_fetch(stripped, tool, tool_input, query, json_results)
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


def _clean(value: Any) -> str:
    if isinstance(value, str):
        v = value.strip()
        return "" if v in _NA else v
    return ""


def _meta(query: str, **values: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"query": query} if query else {}
    for key, value in values.items():
        if value not in (None, "", []):
            meta[key] = value
    return meta


def _from_json(results: list, tool: str, doc_type: str, query: str) -> list[DocumentRecord]:
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
    text: str, tool: str, doc_type: str, query: str
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
    block: str, tool: str, doc_type: str, query: str, rank: int
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


# ---------------------------------------------------------------- page fetches (asked URLs only)

def url_key(url: str) -> str:
    """The form two spellings of one page share (for matching a section to an asked URL, never
    stored): scheme and host lower-cased, http as https, default port, fragment and one
    trailing `/` dropped. Plain string work: it runs once per header block of a response."""
    raw = url.strip()
    head = raw[:8].lower()
    if head.startswith("https://"):
        rest = raw[8:]
    elif head.startswith("http://"):
        rest = raw[7:]
    else:
        return raw
    cut = len(rest)
    for ch in "/?#":
        at = rest.find(ch, 0, cut)
        if at >= 0:
            cut = at
    netloc, tail = rest[:cut].lower(), rest[cut:].partition("#")[0]
    if not netloc or "@" in netloc:
        return raw
    for port in (":443", ":80"):
        if netloc.endswith(port):
            netloc = netloc[: -len(port)]
    path, mark, query = tail.partition("?")
    if path.endswith("/"):
        path = path[:-1]
    return f"https://{netloc}{path}{mark}{query}"


def _head_meta(m: re.Match) -> tuple[str, str]:
    """(published, author) from a header block's optional lines (the first of each)."""
    published = author = ""
    for line in m.group("meta").split("\n"):
        if line.startswith("Published: ") and not published:
            published = line[len("Published: "):].strip()
        elif line.startswith("Author: ") and not author:
            author = line[len("Author: "):].strip()
    return published, author


def _split_errors(text: str) -> tuple[str, list[str]]:
    """The text without its trailing `Error fetching <url>: <tag>` lines (and blank lines),
    and their URLs. Reads from the end only."""
    failed: list[str] = []
    end = len(text)
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        m = _FETCH_ERROR_RE.match(line) if line.startswith("Error fetching ") else None
        if m:
            failed.append(m.group(1))
        elif line.strip():
            break
        end = max(0, start - 1)
    failed.reverse()
    return text[:end], failed


def _fetch_sections(body: str, asked: list[str], failed: list[str]) -> list[tuple[int, re.Match, int]]:
    """(asked index, header match, end) of each section that belongs to an asked URL for
    certain.

    The section at position 0 is the server's (page text cannot come before it). After it,
    a header block naming an asked URL may be a real section or text of the page before it;
    the real ones are one per fetched URL, in the order asked. For each later asked URL the
    headers that can be its section in some consistent split are found (earliest and latest
    positions allowed by its neighbours); a section is stored only when its start and its end
    are the same in every such split. So a page that copies another asked URL's header block
    makes that URL and the page before it go unstored; it never gets text stored for it.
    (Left open: a URL the server answered with neither a section nor an error line, whose
    header block the page before it supplies.)"""
    keys: dict[str, int] = {}
    for i, url in enumerate(asked):
        keys.setdefault(url_key(url), i)
    gone = {url_key(u) for u in failed}
    cands: dict[int, list[re.Match]] = {i: [] for i in range(len(asked))}
    first: tuple[int, re.Match] | None = None
    seen: dict[str, str] = {}
    for m in _FETCH_HEAD_RE.finditer(body):
        if m.start() and body[m.start() - 2:m.start()] != "\n\n":
            continue  # (no header block can start inside this match: its lines hold no blank one)
        url = m.group("url")
        key = seen.get(url)
        if key is None:
            key = seen[url] = url_key(url)
        index = keys.get(key) if key not in gone else None
        if m.start() == 0:
            if index is None and len(asked) == 1 and url_key(asked[0]) not in gone:
                index = 0  # one URL asked, answered under another (a redirect): it is that page
            if index is not None:
                first = (index, m)
        elif index is not None and (first is None or index > first[0]):
            cands[index].append(m)  # (a URL asked before the first section's cannot follow it)
    chain: list[tuple[int, list[re.Match]]] = [(first[0], [first[1]])] if first else []
    begin, prev = (first[0] + 1, 0) if first else (0, -1)
    lo: dict[int, int] = {}
    for i in range(begin, len(asked)):
        later = [m.start() for m in cands[i] if m.start() > prev]
        if later:
            lo[i] = prev = min(later)
    hi: dict[int, int] = {}
    bound = len(body) + 1
    for i in sorted(lo, reverse=True):
        hi[i] = bound = max(m.start() for m in cands[i] if lo[i] <= m.start() < bound)
    chain += [(i, [m for m in cands[i] if lo[i] <= m.start() <= hi[i]]) for i in sorted(lo)]
    out: list[tuple[int, re.Match, int]] = []
    for n, (index, heads) in enumerate(chain):
        if len(heads) != 1:
            continue  # where this section starts is not certain
        if n + 1 < len(chain):
            after = chain[n + 1][1]
            if len(after) != 1:
                continue  # nor where it ends
            end = after[0].start()
        else:
            end = len(body)
        out.append((index, heads[0], end))
    return out


def _adapt_fetch(text: str, tool: str, tool_input: dict, query: str, json_results) -> AdapterResult:
    asked = exa_fetch_urls(tool_input)
    if not asked:
        return AdapterResult(skip_reason="exa: fetch without the URLs asked")
    if isinstance(json_results, list):
        docs = _fetch_from_json(json_results, tool, query, asked)
        return AdapterResult(documents=docs) if docs else AdapterResult(skip_reason="exa: fetch failed")
    body, failed = _split_errors(text)
    docs: list[DocumentRecord] = []
    for index, head, end in _fetch_sections(body, asked, failed):
        content = body[head.end():end].strip()
        url, title, final = asked[index], head.group("title").strip(), head.group("url").strip()
        if is_too_small(content):
            continue
        if len(content) < 600 and errors.strong_error(content):
            continue  # the page fetched was an error page
        published, author = _head_meta(head)
        meta = _meta(query, published=published, author=author, keyed_by=KEYED_BY)
        if url_key(final) != url_key(url):
            meta["final_url"] = final
        docs.append(
            DocumentRecord(
                source=url,
                source_tool=SOURCE_TOOL,
                tool=tool,
                title=None if title in ("", "(no title)") else title,
                content=content,
                type="web-page",
                url=url,
                metadata=meta,
            )
        )
    if docs:
        return AdapterResult(documents=docs)
    if failed or _PAGE_HEADER_RE.search(body):
        return AdapterResult(skip_reason="exa: fetch failed")
    if is_too_small(text):
        return AdapterResult(skip_reason="empty content")
    reason = errors.short_error(text)
    if reason is not None:
        return AdapterResult(skip_reason=f"exa error: {reason}")
    return AdapterResult(skip_reason="exa: unrecognised output")


def _fetch_from_json(results: list, tool: str, query: str, asked: list[str]) -> list[DocumentRecord]:
    """Older `crawling_exa`: JSON.stringify of the /contents response. Each result is matched
    to an asked URL by its `id` (the URL sent) or `url`; each asked URL takes one result."""
    keys = [url_key(u) for u in asked]
    rows = [r for r in results if isinstance(r, dict)]
    taken: dict[int, dict] = {}
    for r in rows:
        for field in ("id", "url"):
            value = _clean(r.get(field))
            index = next((i for i, k in enumerate(keys) if value and k == url_key(value)), None)
            if index is not None:
                taken.setdefault(index, r)
                break
    if not taken and len(asked) == 1 and len(rows) == 1:
        taken[0] = rows[0]  # one URL asked, one page answered under another URL
    docs: list[DocumentRecord] = []
    for index in sorted(taken):
        r, url = taken[index], asked[index]
        content = _clean(r.get("text"))
        if is_too_small(content) or (len(content) < 600 and errors.strong_error(content)):
            continue
        final = _clean(r.get("url"))
        meta = _meta(query, published=_clean(r.get("publishedDate")), author=_clean(r.get("author")),
                     keyed_by=KEYED_BY)
        if final and url_key(final) != url_key(url):
            meta["final_url"] = final
        docs.append(
            DocumentRecord(
                source=url,
                source_tool=SOURCE_TOOL,
                tool=tool,
                title=_clean(r.get("title")) or None,
                content=content,
                type="web-page",
                url=url,
                metadata=meta,
            )
        )
    return docs
