"""What `memhooks add` reads in a fetched page, as pure functions: checked URLs, the link list
of an `llms.txt`, a page's text and title.

Every byte parsed here came from a web server: outside, hostile text. So every function is
linear in its input: scans with `str.find`/`split` that move forward only, and for HTML tags
a few patterns that cannot backtrack (possessive runs, fixed replacements); the tests run
each on 2 MiB worst cases (tests/test_sources.py). Every
URL leaving this module is an absolute http(s) URL without credentials, whitespace or
control characters, and without a fragment.

The llms.txt format (llmstxt.org): markdown; an H1 with the site's name, a blockquote, then
H2 sections whose markdown lists hold `[name](url)` links, optionally followed by `: notes`.
The section named `Optional` holds links an agent may skip: they are visited last.

Standard library only.
"""

from __future__ import annotations

import codecs
import html as _html
import re as _re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from memhooks.store.admission import admit_page

MAX_URL = 4096
MAX_TITLE_SCAN = 64 * 1024  # characters looked at for a markdown page's first heading
DEFAULT_PORTS = {"http": 80, "https": 443}
INDEX_NAMES = ("llms.txt",)  # a file list whose links are followed; llms-full.txt is one page


@dataclass(frozen=True)
class Link:
    """One entry of an llms.txt file list."""
    url: str
    title: str | None
    notes: str | None
    section: str | None
    optional: bool


# ----------------------------------------------------------------------------- URLs

def checked_url(raw, base: str | None = None) -> str | None:
    """`raw` (resolved against `base` when relative) as an absolute http(s) URL: lower-case
    scheme and host, no credentials, no whitespace or control characters, no fragment, a
    path of at least `/`. None for anything else (`file:`, `data:`, `javascript:`, `ftp:`,
    a bad port, a URL over 4 KiB)."""
    if not isinstance(raw, str):
        return None
    s = raw.strip()
    if not s or len(s) > MAX_URL:
        return None
    if any(ord(ch) < 33 or ord(ch) == 127 or ch in "\u0085\u00a0\u2028\u2029" for ch in s):
        return None
    try:
        if base is not None:
            s = urljoin(base, s)
        parts = urlsplit(s)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            return None
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not host or parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return None
    host = host.lower()
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    url = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    return url if len(url) <= MAX_URL else None


def site_of(url: str) -> str:
    """`scheme://host[:port]` of a checked URL: what "the same site" means (scheme, host
    and port all equal)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def same_site(url: str, site: str) -> bool:
    return site_of(url) == site


def is_index(url: str) -> bool:
    """Whether a URL names an llms.txt (its links are followed); anything else, llms-full.txt
    included, is stored as one page."""
    path = urlsplit(url).path
    return path.rsplit("/", 1)[-1].lower() in INDEX_NAMES


# ----------------------------------------------------------------------------- llms.txt

def _list_item(line: str) -> str | None:
    """The text of a markdown list item (`- x`, `* x`, `+ x`, `1. x`), else None."""
    if line[:2] in ("- ", "* ", "+ "):
        return line[2:].lstrip()
    digits = 0
    while digits < len(line) and digits < 9 and line[digits].isascii() and line[digits].isdigit():
        digits += 1
    if digits and line[digits:digits + 2] in (". ", ") "):
        return line[digits + 2:].lstrip()
    return None


def _item_link(item: str) -> tuple[str, str, str | None] | None:
    """(name, target, notes) of `[name](target "title"): notes`, else None. Each `find`
    starts past the last: linear in the line."""
    if not item.startswith("["):
        return None
    close = item.find("](")
    if close < 0:
        return None
    end = item.find(")", close + 2)
    if end < 0:
        return None
    name = item[1:close].strip()
    target = item[close + 2:end].strip()
    if target.startswith("<"):
        gt = target.find(">")
        target = target[1:gt] if gt > 0 else ""
    else:
        target = target.split(None, 1)[0] if target else ""
    rest = item[end + 1:].lstrip()
    notes = rest[1:].strip() or None if rest.startswith(":") else None
    return name, target, notes


MAX_LINKS = 10_000


def parse_llms_txt(text: str, base_url: str, max_links: int = MAX_LINKS) -> tuple[str | None, list[Link]]:
    """(the H1, the file-list links in order: the `Optional` section's last). Links are
    checked URLs resolved against `base_url`, each once (the first mention wins), at most
    `max_links` of them; lines inside code fences are not links."""
    title: str | None = None
    section: str | None = None
    optional = False
    in_code = False
    seen: set[str] = set()
    first: list[Link] = []
    last: list[Link] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or not line:
            continue
        if line.startswith("# ") and title is None:
            title = line[2:].strip() or None
            continue
        if line.startswith("## "):
            section = line[3:].strip() or None
            optional = (section or "").lower() == "optional"
            continue
        item = _list_item(line)
        if item is None or len(seen) >= max_links:
            continue
        found = _item_link(item)
        if found is None:
            continue
        name, target, notes = found
        url = checked_url(target, base_url)
        if url is None or url in seen:
            continue
        seen.add(url)
        (last if optional else first).append(Link(url, name or None, notes, section, optional))
    return title, first + last


# ----------------------------------------------------------------------------- pages

TEXTUAL = frozenset({"application/xhtml+xml", "application/xml", "application/json",
                     "application/markdown", "application/x-markdown"})


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def charset(content_type: str | None) -> str:
    """The `charset=` of a Content-Type when Python knows it, else utf-8."""
    for param in (content_type or "").split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            name = value.strip().strip("\"'")[:40]
            try:
                return codecs.lookup(name).name
            except LookupError:
                break
    return "utf-8"


def decode_body(body: bytes, content_type: str | None) -> str | None:
    """A response body as text, or None when it is not text (an image, a PDF, an archive:
    a media type that is not text, or NUL bytes in its head when no type was sent)."""
    kind = media_type(content_type)
    if kind and not (kind.startswith("text/") or kind in TEXTUAL or kind.endswith("+xml")):
        return None
    if not kind and b"\x00" in body[:4096]:
        return None
    return body.decode(charset(content_type), "replace")


def looks_html(content_type: str | None, text: str) -> bool:
    kind = media_type(content_type)
    if "html" in kind:
        return True
    if kind and kind != "text/plain":
        return False
    head = text[:1024].lstrip().lower()
    return head.startswith(("<!doctype html", "<html"))


def markdown_title(text: str) -> str | None:
    """The first `# ` heading of a markdown text (outside code fences), looked for in its
    first 64 KiB."""
    in_code = False
    for raw in text[:MAX_TITLE_SCAN].split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            in_code = not in_code
        elif not in_code and line.startswith("# "):
            return line[2:].strip().strip("#").strip() or None
    return None


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}  # keeps the length
MAX_TAGS = 50_000  # tags read one by one; a page with more is flattened (every tag dropped)
SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe", "object",
                     "nav", "aside", "form", "select", "button", "canvas"})
BLOCKS = frozenset({"p", "div", "ul", "ol", "table", "section", "article", "main", "header",
                    "footer", "blockquote", "dl", "dt", "dd", "hr", "figure", "figcaption",
                    "details", "summary", "td", "th", "body"})
LINES = frozenset({"br", "tr"})
HEADINGS = {f"h{n}": "#" * n for n in range(1, 7)}

# Patterns on page text, each linear: a fixed opening then a possessive run (`*+`) that never
# backtracks, or one character class; fixed replacements (no Python per match). None of them
# can restart inside a run it failed on (no `run + something` shapes).
_ANY_TAG = _re.compile(r"<[^<>]*+>")
_WHITESPACE = _re.compile(r"[ \t\n\r\f\v]++")
_BLANKS = _re.compile(r"[ \t]++")
_AROUND_NEWLINE = _re.compile(r" ?\n ?")  # spaces are single by then
_NEWLINES = _re.compile(r"\n\n\n++")
_COMMON_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"), ("&#x27;", "'"),
                    ("&nbsp;", " "), ("&amp;", "&"))


def unescape(text: str) -> str:
    """HTML entities decoded: the common ones with str.replace; the others with html.unescape
    when they are few (it runs Python per entity), else left as they are."""
    if "&" not in text:
        return text
    for entity, char in _COMMON_ENTITIES:
        if entity in text:
            text = text.replace(entity, char)
    if "&" in text and text.count("&") * 32 <= len(text):
        text = _html.unescape(text)
    return text


def _fold(segment: str) -> str:
    """Text between tags: whitespace runs folded to one space (ends kept as one space)."""
    return _WHITESPACE.sub(" ", segment)


def _tag_name(page: str, start: int, end: int) -> str:
    """The lower-case name of the tag whose text runs from `start` (after `<` or `</`) to `end`."""
    token = page[start:min(end, start + 16)].lower()
    return token.split(None, 1)[0].rstrip("/") if token.strip() else ""


def html_to_text(page: str) -> tuple[str | None, str]:
    """(title, text) of an HTML page: comments, scripts, styles, navigation and forms dropped,
    headings as markdown `#` lines, list items as `- ` lines, `<pre>` kept as it is (its tags
    dropped), entities decoded. The title is the first `<h1>`, else `<title>`.

    One forward scan with str.find. A page of more than MAX_TAGS tags (no documentation page
    has them; a hostile one might) is flattened instead: every tag dropped, whitespace folded."""
    if page.count("<") > MAX_TAGS:
        return None, _NEWLINES.sub("\n\n", unescape(_BLANKS.sub(" ", _ANY_TAG.sub(" ", page)))).strip()
    lower = page.translate(_ASCII_LOWER)
    n = len(page)
    out: list[tuple[bool, str]] = []  # (verbatim, text)
    title_tag: str | None = None
    h1: str | None = None
    h1_start = -1
    pre = 0
    heading_id: str | None = None  # the URL anchor of the heading being read
    section_id: str | None = None  # the id of a `<section>` just opened (Sphinx puts it there)
    in_heading = False
    i = 0
    while i < n:
        j = page.find("<", i)
        if j < 0:
            j = n
        if j > i:
            out.append((pre > 0, page[i:j] if pre else _fold(page[i:j])))
            if section_id and page[i:j].strip():
                section_id = None
        if j >= n:
            break
        if lower.startswith("<!--", j):
            k = page.find("-->", j + 4)
            i = n if k < 0 else k + 3
            continue
        k = page.find(">", j + 1)
        if k < 0:
            break  # a `<` never closed: the rest is not text
        closing = page.startswith("/", j + 1)
        name = _tag_name(lower, j + 2 if closing else j + 1, k)
        i = k + 1
        if not name or page.startswith(("!", "?"), j + 1):
            continue  # `<!doctype …>`, `<?xml …?>`, `< >`
        if not closing and (name == "title" or name in SKIPPED) and page[k - 1] != "/":
            end = lower.find("</" + name, i)
            if name == "title" and title_tag is None:
                title_tag = " ".join(unescape(page[i:end if end >= 0 else n]).split())[:1000] or None
            gt = -1 if end < 0 else page.find(">", end)
            i = n if gt < 0 else gt + 1
            continue
        if name in HEADINGS:
            if closing:
                if name == "h1" and h1 is None and h1_start >= 0:
                    h1 = " ".join(unescape("".join(t for _v, t in out[h1_start:])).split())[:1000] or None
                out.append((False, f" {{#{heading_id}}}\n\n" if heading_id else "\n\n"))
                heading_id, in_heading = None, False
            else:
                out.append((False, "\n\n" + HEADINGS[name] + " "))
                heading_id = anchor_id(tag_attr(page, lower, j, k, "id")) or section_id
                section_id, in_heading = None, True
                if name == "h1" and h1 is None:
                    h1_start = len(out)
        elif name == "section" and not closing:
            section_id = anchor_id(tag_attr(page, lower, j, k, "id"))
        elif name == "a" and not closing and in_heading and heading_id is None:
            href = tag_attr(page, lower, j, k, "href")  # a heading's own permalink (`¶`)
            if href and href.startswith("#"):
                heading_id = anchor_id(href[1:])
        elif name == "li":
            if not closing:
                out.append((False, "\n- "))
        elif name == "pre":
            pre = max(0, pre - 1) if closing else pre + 1
            out.append((False, "\n\n"))
        elif name in LINES:
            out.append((False, "\n"))
        elif name in BLOCKS:
            out.append((False, "\n\n"))
    text: list[str] = []
    flow: list[str] = []
    for verbatim, piece in out:
        if verbatim:
            text.append(_flow_text(flow))
            flow = []
            text.append(unescape(piece))
        else:
            flow.append(piece)
    text.append(_flow_text(flow))
    return h1 or title_tag, _NEWLINES.sub("\n\n", "".join(text)).strip()


_ANCHOR_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


def anchor_id(value: str | None) -> str | None:
    """An id usable as a URL anchor in the stored text (`{#id}` after a heading), else None."""
    if not value or len(value) > 200 or not all(c in _ANCHOR_CHARS for c in value):
        return None
    return value


def tag_attr(page: str, lower: str, start: int, end: int, attr: str) -> str | None:
    """The value of attribute `attr` in the tag page[start:end] (quoted or bare), else None.
    A bounded forward scan of the tag."""
    at = start
    while True:
        at = lower.find(attr + "=", at, end)
        if at < 0:
            return None
        if lower[at - 1] in " \t\n\r\"'/":
            break
        at += len(attr) + 1
    v = at + len(attr) + 1
    if v < end and page[v] in "\"'":
        close = page.find(page[v], v + 1, end)
        value = page[v + 1:close] if close >= 0 else ""
    else:
        stop = v
        while stop < end and page[stop] not in " \t\n\r/>":
            stop += 1
        value = page[v:stop]
    return value.strip() or None


def _flow_text(pieces: list[str]) -> str:
    if not pieces:
        return ""
    return _AROUND_NEWLINE.sub("\n", _BLANKS.sub(" ", unescape("".join(pieces))))


MAX_TITLE = 300


def short_title(text: str | None) -> str | None:
    """A title as one line of at most MAX_TITLE characters (None when nothing is left)."""
    if not text:
        return None
    return " ".join(text[:MAX_TITLE * 8].split())[:MAX_TITLE] or None


def page_document(body: bytes, content_type: str | None, url: str,
                  link_title: str | None = None) -> tuple[str, str] | None:
    """(title, text) to store for a fetched page, or None when it is not text or holds
    nothing. HTML becomes text; markdown and plain text are kept as they are. The title is
    the llms.txt link's name, else the page's first heading, else its `<title>`, else the URL.
    The page as sent is judged first (admission's admit_page, before HTML becomes text and
    its heading is set apart): an error page raises memhooks.store.admission.Refused."""
    text = decode_body(body, content_type)
    if text is None:
        return None
    admit_page(text)
    if looks_html(content_type, text):
        heading, text = html_to_text(text)
    else:
        heading = markdown_title(text)
    if not text.strip():
        return None
    return (short_title(link_title) or short_title(heading) or url), text
