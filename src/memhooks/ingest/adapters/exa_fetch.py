"""EXA page fetches (``web_fetch_exa`` and its alias ``crawling_exa``): at most one document
per URL the agent asked for.

exa-mcp-server's webFetch.ts writes, per page, ``# Title``, ``URL: …``, optional
``Published:`` / ``Author:``, a blank line and the text; then ``Error fetching <url>: <tag>``
lines for the URLs that failed. Older ``crawling_exa`` returned ``JSON.stringify`` of the
/contents response.

A fetch never trusts structure inside a page: every document is keyed by a URL the agent
asked for (``urls`` / ``url`` in the tool input, read as the server reads them), and a
``# Title`` / ``URL:`` block inside a page is page text. The response holds one section per
fetched URL, in the order asked; it is split only where a header block names an asked URL
(each once, in order). When a page's text holds a header block for an asked URL, the split
is ambiguous: a section whose start or end is not certain is stored for no URL (see
``_fetch_sections``).
"""

from __future__ import annotations

import re
from typing import Any

from memhooks import classify as errors
from memhooks.ingest.adapters.text import is_too_small
from memhooks.ingest.records import AdapterResult, DocumentRecord, SourceTool
from memhooks.toolargs import EXA_KEYED_BY as KEYED_BY
from memhooks.toolargs import exa_fetch_urls

SOURCE_TOOL: SourceTool = "exa"
FETCH_TOOLS = ("web_fetch_exa", "crawling_exa")

# A page fetch's header block where the server writes one (at the start of the text or after
# a blank line): `# title`, `URL: u`, optional `Published:` / `Author:` lines, then a blank line
# (or the end). Possessive repetition: linear on hostile text.
# (Where it starts is checked by the caller: a literal first makes the scan fast.)
_FETCH_HEAD_RE = re.compile(
    r"# (?P<title>[^\n]*+)\nURL: (?P<url>[^\n]*+)"
    r"(?P<meta>(?:\n(?:Published|Author): [^\n]*+)*+)(?:\n\n|\Z)"
)
FETCH_ERROR_RE = re.compile(r"^Error fetching (\S+): (.+)$")
_NA = ("", "N/A", "n/a", "null", "undefined")


def clean(value: Any) -> str:
    """A string field stripped, '' for anything else and for Exa's N/A placeholders."""
    if isinstance(value, str):
        v = value.strip()
        return "" if v in _NA else v
    return ""


def meta_of(query: str, **values: Any) -> dict[str, Any]:
    """Document metadata: the query, then the values that are not empty."""
    meta: dict[str, Any] = {"query": query} if query else {}
    for key, value in values.items():
        if value not in (None, "", []):
            meta[key] = value
    return meta


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
        m = FETCH_ERROR_RE.match(line) if line.startswith("Error fetching ") else None
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


def adapt_fetch(text: str, tool: str, tool_input: dict, query: str, json_results) -> AdapterResult:
    asked = exa_fetch_urls(tool_input)
    if not asked:
        return AdapterResult(skip_reason="exa: fetch without the URLs asked")
    if isinstance(json_results, list):
        found = _fetch_from_json(json_results, tool, query, asked)
        return AdapterResult(documents=found) if found else AdapterResult(skip_reason="exa: fetch failed")
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
        meta = meta_of(query, published=published, author=author, keyed_by=KEYED_BY)
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
    if failed or _FETCH_HEAD_RE.search(body):
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
            value = clean(r.get(field))
            index = next((i for i, k in enumerate(keys) if value and k == url_key(value)), None)
            if index is not None:
                taken.setdefault(index, r)
                break
    if not taken and len(asked) == 1 and len(rows) == 1:
        taken[0] = rows[0]  # one URL asked, one page answered under another URL
    docs: list[DocumentRecord] = []
    for index in sorted(taken):
        r, url = taken[index], asked[index]
        content = clean(r.get("text"))
        if is_too_small(content) or (len(content) < 600 and errors.strong_error(content)):
            continue
        final = clean(r.get("url"))
        meta = meta_of(query, published=clean(r.get("publishedDate")), author=clean(r.get("author")),
                     keyed_by=KEYED_BY)
        if final and url_key(final) != url_key(url):
            meta["final_url"] = final
        docs.append(
            DocumentRecord(
                source=url,
                source_tool=SOURCE_TOOL,
                tool=tool,
                title=clean(r.get("title")) or None,
                content=content,
                type="web-page",
                url=url,
                metadata=meta,
            )
        )
    return docs
