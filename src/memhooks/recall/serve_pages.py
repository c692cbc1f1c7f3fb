"""The serve decision for page fetches: WebFetch and EXA `web_fetch_exa` / `crawling_exa`
(standard library only; memhooks.recall.serve calls these).

* `WebFetch`: the same normalised URL, the same prompt and the same offset, within the TTL.
* EXA: every asked URL captured by an EXA page fetch for exactly that URL, within the TTL.

`max_age` (the fallback's longer staleness, memhooks.recall.fallback) widens the TTL.
"""

from urllib.parse import urlsplit, urlunsplit

from memhooks._jsonlite import loads_object
from memhooks.recall.render import when_utc
from memhooks.recall.served import Served, num, q, s
from memhooks.store import provenance, queries
from memhooks.toolargs import EXA_KEYED_BY, exa_fetch_urls, webfetch_offset

EXA_FETCH = ("web_fetch_exa", "crawling_exa")
MAX_URLS = 10


def norm_url(url: str) -> str | None:
    """Scheme and host lower-cased, http upgraded to https (as WebFetch does), default
    port and fragment dropped, an empty path made `/`. Query strings are kept as written."""
    try:
        p = urlsplit(url.strip())
        host, port = (p.hostname or "").lower(), p.port
    except ValueError:
        return None
    if p.scheme.lower() not in ("http", "https") or not host or p.username or p.password:
        return None
    netloc = f"[{host}]" if ":" in host else host
    if port and port not in (80, 443):
        netloc += f":{port}"
    return urlunsplit(("https", netloc, p.path or "/", p.query, ""))


def _url_variants(url: str, norm: str) -> list[str]:
    out = [url, url.strip(), norm, "http" + norm[5:]]
    if norm.endswith("/") and norm.count("/") == 3:
        out += [norm[:-1], "http" + norm[5:-1]]
    return list(dict.fromkeys(out))


def _pages(conn, url: str, source_tool: str, tools: tuple, since: float) -> list:
    """Fresh documents captured for this URL (the same page once normalised), newest first."""
    norm = norm_url(url)
    if norm is None:
        return []
    rows = queries.captured_pages(conn, _url_variants(url, norm), source_tool, tools)
    return [r for r in rows if norm_url(r["url"] or "") == norm and (r["at"] or 0) >= since]


def _since(now: float, max_age: float | None) -> float:
    ttl = num("MEMHOOKS_SERVE_WEB_TTL_S", num("MEMHOOKS_TIER2_TTL_S", 4 * 3600.0))
    return now - max(ttl, max_age or 0.0)


def answer_webfetch(conn, tool_input: dict, now: float, max_chars: int,
                    max_age: float | None = None) -> Served | None:
    url, prompt = s(tool_input.get("url")), s(tool_input.get("prompt"), 20000)
    offset = webfetch_offset(tool_input)  # a page read from another offset is another answer
    if not url or not prompt or offset is None:
        return None
    want = " ".join(prompt.split())
    for r in _pages(conn, url, "webfetch", (), _since(now, max_age)):
        m = loads_object(r["metadata"])
        if " ".join(str(m.get("prompt") or "").split()) != want or m.get("offset", -1) != offset:
            continue

        size = m.get("bytes")
        page = size if isinstance(size, int) else 0
        asked = f"for the prompt {q(prompt)}{provenance.team_note(conn, [r['id']])}"
        return Served("webfetch", f"WebFetch of {q(url, 200)}", when_utc(r["at"]), asked,
                      r["content"] or "", max_chars, [r["id"]], None,
                      (r["bytes"] or 0) + max(0, page), r["at"])
    return None


def answer_exa_fetch(conn, tool_input: dict, now: float, max_chars: int,
                     max_age: float | None = None) -> Served | None:
    """Per URL: each URL asked needs a page a fetch stored for exactly that URL, as asked."""
    urls = exa_fetch_urls(tool_input)
    if not urls or len(urls) > MAX_URLS:
        return None
    since = _since(now, max_age)
    parts, ids, times, live = [], [], [], 0
    for url in urls:
        rows = [r for r in _pages(conn, url, "exa", EXA_FETCH, since)
                if loads_object(r["metadata"]).get("keyed_by") == EXA_KEYED_BY]
        if not rows:
            return None
        page = rows[0]
        parts.append(f"# {' '.join(str(page['title'] or page['url']).split())}\nURL: {page['url']}\n\n"
                     f"{page['content'] or ''}")
        ids.append(page["id"])
        times.append(page["at"])
        live += page["bytes"] or 0

    return Served("exa-fetch", f"EXA page fetch of {len(urls)} URL{'s' * (len(urls) > 1)}",
                  when_utc(min(times)), f"for {q(', '.join(urls), 300)}", "\n\n---\n\n".join(parts),
                  max_chars, ids, None, live, min(times))
