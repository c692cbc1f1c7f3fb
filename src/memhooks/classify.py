"""Is a tool's answer an error? Recognised by what real answers look like, plus the error
families every backend speaks (pure functions, no IO; a shared leaf module, standard library
only: the adapters use it, and so does admission in store/, which lc-cache-write runs).

A short body counts as a document only when it has its source's positive shape (Context7
docs: markdown headings, code fences, ``Source:`` lines; resolve: library blocks; EXA:
result lists and pages). Whatever the source, an HTML error page, a JSON error object or a
text that opens like an error is never a document. Every check looks at a bounded prefix
of the text, so the cost is linear and small.
"""

from __future__ import annotations

import json

# Bodies shorter than this must show a document's shape to be kept.
SHORT_CHARS = 1500
_HEAD = 400  # how much of a text its opening checks look at
_SCAN = 4000  # how much of a short text the family checks look at

FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rate limited", (
        "rate limit", "rate-limit", "ratelimit", "too many requests", "quota", "request limit",
        "usage limit", "limit reached", "limit exceeded", "limit has been reached",
        "exceeded your", "have exceeded", "out of credits", "insufficient credits",
        "insufficient balance", "credits exhausted", "no credits", "credit limit",
        "payment required", "upgrade your plan", "throttl", "slow down", "retry after",
        "retry-after", "monthly limit", "daily limit", "free tier", "billing", "trial has ended",
        "trial expired", "trial has expired", "subscription", "exhausted", "used up",
    )),
    ("unauthorized", (
        "api key", "api-key", "apikey", "unauthori", "forbidden", "authenticat",
        "not authori", "permission denied", "access denied", "invalid token", "token expired",
        "expired token", "invalid credentials", "credentials", "revoked", "access token",
        "not allowed", "login required", "sign in", "insufficient permissions", "401", "403",
    )),
    ("network error", (
        "fetch failed", "failed to fetch", "econnrefused", "econnreset", "etimedout",
        "enotfound", "eai_again", "ehostunreach", "socket hang up", "network", "timed out",
        "timeout", "connection refused", "connection reset", "connection closed",
        "connection error", "getaddrinfo", "certificate", "ssl", "tls", "aborterror",
        "operation was aborted", "typeerror", "unreachable", "could not connect",
        "couldn't connect", "unable to connect", "failed to connect", "dns",
    )),
    ("http error", (
        "bad request", "not found", "method not allowed", "not acceptable", "request timeout",
        "internal server error", "server error", "not implemented", "bad gateway",
        "service unavailable", "gateway timeout", "status code", "http error", "http status",
        "status 4", "status 5", "error 4", "error 5", "origin error", "web server is down",
        "cloudflare", "ray id", "upstream", "temporarily unavailable", "maintenance",
        "overloaded", "502", "503", "504", "500", "404", "429",
    )),
    ("not found", (
        "does not exist", "doesn't exist", "no libraries found", "no library found",
        "no results", "no documentation", "not finalized", "not finalised", "no content",
        "no matching", "could not find", "couldn't find", "unable to find", "unknown library",
        "invalid library", "no data", "nothing found", "0 results", "no snippets",
        "being processed", "not indexed", "not available", "redirected",
    )),
    ("failure", (
        "error", "failed", "failure", "unable to", "could not", "couldn't", "cannot",
        "can't", "something went wrong", "unexpected", "exception", "invalid", "denied",
        "unavailable", "try again", "sorry", "oops", "problem",
    )),
)

# How an error opens: "Error: …", "Rate limited …", "Request failed with status code 403" …
_OPENING = (
    r"(?:[\s*_>#`\[\](){}\"'!-]{0,8}+(?:mcp )?(?:error|err|exception|warning|fatal|failed|failure"
    r"|context7|exa|upstream|api|http|server)(?: (?:error|api error|request))?"
    r"(?: ?[(\[]?-?[0-9]{3,5}[)\]]?)?[ \t]*[:—-][\s*_]{0,4}+)?"
    r"(?:rate[ -]?limit(?!ing)|too many requests|(?:monthly |daily |hourly |usage |api )?(?:request |usage )?"
    r"(?:quota|limit) (?:exceeded|reached|hit)|(?:monthly |daily )?(?:request |usage )?limit reached"
    r"|quota|you(?:'ve| have) (?:exceeded|reached|hit|run out|been rate)|insufficient (?:credits|balance|funds)"
    r"|payment required|request failed|request (?:timed out|timeout|aborted|error)|failed to|fetch failed|typeerror|referenceerror|syntaxerror"
    r"|aborterror|[a-z]{0,30}error:|(?:connect |read |write )?econn|enotfound|etimedout|eai_again|socket hang up|network ?error|timed? ?out"
    r"|connection (?:refused|reset|error|timed)|getaddrinfo|unauthori[sz]ed|forbidden|access denied"
    r"|permission denied|authentication (?:failed|required|error)|not authori[sz]ed"
    r"|invalid (?:api[ _-]?key|key|token|credentials|authorization|request|library)"
    r"|(?:your |the |this )?api[ _-]?key (?:is |was |has been )?(?:invalid|missing|expired|revoked|required|not valid|incorrect)"
    r"|missing (?:api[ _-]?key|authorization|credentials)|no api key|api key required"
    r"|internal server error|server error|bad gateway|service (?:temporarily )?unavailable|gateway time-?out"
    r"|bad request|not found|(?:404|403|401|429|500|502|503|504|400)\b|http/?[0-9. ]{0,5}[45][0-9][0-9]"
    r"|status(?: code)? ?:? ?[45][0-9][0-9]|error (?:fetching|searching|retrieving|calling|getting"
    r"|loading|processing|executing|connecting|occurred|while|in request|code|[0-9])"
    r"|an? (?:unexpected |unknown |internal )?error (?:occurred|has occurred|happened|was)"
    r"|internal (?:server )?error|unexpected (?:token|end of)|the (?:operation|request) was aborted"
    r"|unexpected error|unknown error|something went wrong"
    r"|the library you are trying to access|the library (?:does not exist|was not found)"
    r"|library \S{1,200} (?:does not exist|not found|was not found|has been redirected)"
    r"|library not found|documentation not found|no (?:code |info )?documentation"
    r"|no (?:content|context data|results?|search results|libraries|library|matching|data)"
    r"|could not (?:find|fetch|retrieve|connect|access|load|resolve|complete)"
    r"|couldn't (?:find|fetch|retrieve|connect|access|load|resolve|complete)"
    r"|unable to (?:find|fetch|retrieve|connect|access|load|resolve|complete|process|verify)"
    r"|cannot (?:find|fetch|retrieve|connect|access|load|resolve)|exa api error|context7 (?:api )?error"
    r"|claude code is unable|domain \S{1,200} is (?:blocked|not allowed)|redirect detected"
    r"|sorry|oops|upstream|maintenance|temporarily unavailable|overloaded|just a moment"
    r"|attention required|checking your browser|enable javascript and cookies)"
)

_HTML_OPEN = ("<!doctype html", "<html", "<head", "<body", "<center>", "<h1>", "<title>", "<?xml")
_HTML_ERROR_WORDS = (
    "error", "bad gateway", "service unavailable", "cloudflare", "just a moment",
    "attention required", "access denied", "forbidden", "not found", "gateway", "timeout",
    "captcha", "unavailable", "too many requests", "blocked", "nginx", "ray id", "oops",
    "snag", "sorry", "went wrong", "problem", "denied",
)
_JSON_ERROR_KEYS = frozenset({
    "error", "errors", "message", "msg", "detail", "details", "status", "statuscode",
    "status_code", "code", "fault", "reason", "error_description", "errormessage", "title",
    "type", "requestid", "request_id", "timestamp", "path", "success", "ok", "retryafter",
    "retry_after", "name", "stack", "cause", "help", "documentation_url", "instance",
})
_STATUS = r"(?<![0-9])[45][0-9][0-9](?![0-9])"
_compiled: dict = {}


def _rx(pattern: str, ignorecase: bool = False):
    """Compiled on first use: lc-cache-write imports this module and seldom needs a regex."""
    got = _compiled.get(pattern)
    if got is None:
        # lazy: `re` only when a pattern is needed (lc-cache-write imports this module)
        import re

        got = _compiled[pattern] = re.compile(pattern, re.IGNORECASE if ignorecase else 0)
    return got


def family(text: str) -> str | None:
    """The first error family whose wording *text* (a short body) uses, or None."""
    low = text[:_SCAN].lower()
    for name, phrases in FAMILIES:
        if any(p in low for p in phrases):
            return name
    return None


def html_error_page(text: str) -> bool:
    low = text[:_SCAN].lstrip().lower()
    if not low.startswith(_HTML_OPEN):
        return False
    return any(w in low for w in _HTML_ERROR_WORDS) or bool(_rx(_STATUS).search(low[:2000]))


def json_error_object(text: str) -> bool:
    """`{"error": …}`, `{"message": "…"}`, `{"status": 500, …}`: an API error passed through."""
    stripped = text.strip()
    if not stripped.startswith("{") or len(stripped) > 64 * 1024:
        return False
    try:
        obj = json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict) or not obj:
        return False
    keys = {str(k).lower() for k in obj}
    if keys & {"results", "content", "data", "documents", "snippets", "libraries", "text"}:
        if not ({"error", "errors"} & keys and not obj.get("results")):
            return False
    if {"error", "errors", "fault"} & keys:
        return True
    if keys <= _JSON_ERROR_KEYS:
        status = obj.get("status", obj.get("statusCode", obj.get("code")))
        if isinstance(status, (int, str)) and _rx(_STATUS).fullmatch(str(status).strip() or "0"):
            return True
        if "message" in keys or "msg" in keys or "detail" in keys or "reason" in keys:
            return True
        if obj.get("success") is False or obj.get("ok") is False:
            return True
    return False


def opens_like_error(text: str) -> bool:
    return bool(_rx(_OPENING, ignorecase=True).match(text[:_HEAD].lstrip()))


def page_error(stripped: str, title: str | None = None) -> str | None:
    """The error pages any source can hand back, recognised by what they are: a bot-check
    interstitial, EXA's empty fetch, an HTML error page, a JSON error object."""
    if interstitial(stripped, title):
        return "bot-check interstitial"
    if empty_fetch(stripped):
        return "empty fetch"
    if html_error_page(stripped):
        return "html error page"
    if json_error_object(stripped):
        return "json error object"
    return None


def strong_error(text: str) -> str | None:
    """An error whatever the source: an error page (page_error), or a body of at most a few
    KB that opens like an error. Returns the family."""
    stripped = text.strip()
    page = page_error(stripped)
    if page is not None:
        return page
    if len(stripped) <= _SCAN and opens_like_error(stripped):
        return family(stripped) or "error"
    return None


# ---------------------------------------------------------------- positive shapes

def _lines(text: str, limit: int = 400):
    for i, line in enumerate(text.split("\n", limit)):
        if i >= limit:
            break
        yield line


def has_markdown_heading(text: str) -> bool:
    for line in _lines(text):
        s = line.lstrip()
        if s.startswith("#"):
            n = len(s) - len(s.lstrip("#"))
            if 1 <= n <= 6 and s[n:n + 1] in (" ", "\t") and s[n:].strip():
                return True
    return False


def c7_docs_shape(text: str) -> bool:
    """Context7 docs: `### Title`, `Source: <url>`, fenced code, or the legacy
    `TITLE:`/`DESCRIPTION:`/`CODE:` snippets."""
    if "```" in text or "~~~" in text:
        return True
    for line in _lines(text):
        s = line.strip()
        if s.startswith(("Source: http", "SOURCE: http", "TITLE: ", "DESCRIPTION: ", "CODE:",
                         "LANGUAGE: ")):
            return True
    return has_markdown_heading(text)


def prose(text: str) -> str:
    """Text without heading lines and code: what an error message would be made of."""
    out = []
    in_code = False
    for line in _lines(text):
        s = line.strip()
        if s.startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or s.startswith("#") or s.startswith(("Source:", "SOURCE:", "TITLE:")):
            continue
        out.append(s)
    return " ".join(x for x in out if x)


def c7_docs_error(text: str) -> str | None:
    """Why a query-docs / get-library-docs body is not documentation, or None."""
    stripped = text.strip()
    if not stripped:
        return "empty content"
    if stripped[0] in "{[" and len(stripped) <= 64 * 1024:
        try:
            json.loads(stripped)
        except (ValueError, RecursionError):
            pass
        else:
            return "json error object" if json_error_object(stripped) else "json, not documentation"
    if html_error_page(stripped):
        return "html error page"
    if interstitial(stripped):
        return "bot-check interstitial"
    shaped = c7_docs_shape(stripped)
    if not shaped:
        if len(stripped) < SHORT_CHARS:
            return family(stripped) or "not documentation"
        return None
    if len(stripped) <= _SCAN and "```" not in stripped:
        body = prose(stripped)
        if len(body) < 300 and opens_like_error(body):
            return family(body) or "error"
    return None


def short_error(text: str) -> str | None:
    """For an answer with no structure of its own (EXA context string, a WebSearch summary):
    an error when it opens like one, or is short and speaks an error family."""
    stripped = text.strip()
    got = strong_error(stripped)
    if got:
        return got
    if len(stripped) < 300:
        return family(stripped) or prose_error(stripped)
    return None


# WebFetch's `result` is the model's own prose about the page: it errs in sentences.
_FETCH_FAIL_PHRASES = (
    "unable to fetch", "failed to fetch", "could not fetch", "couldn't fetch", "unable to access",
    "could not access", "couldn't access", "cannot access", "can't access", "unable to retrieve",
    "could not retrieve", "couldn't retrieve", "was unable to", "returned a 4", "returned a 5",
    "returned an error", "returned status", "returned http", "returned a status",
    "responded with a 4", "responded with a 5", "responded with an error", "access denied",
    "page could not be found", "page not found", "requires authentication", "behind a login",
    "captcha", "enable javascript", "just a moment", "checking your browser", "is blocked",
    "was blocked", "no content was", "page is empty", "did not contain any", "does not contain any",
)


# Words of a summary that tells what a page says (WebFetch answers are the model's prose).
_DESCRIBES = (
    "page", "article", "docs", "documentation", "explain", "describe", "documents ", "covers",
    "shows", "lists", "according", "guide", "section", "tutorial", "example", "uses", "use ",
    "returns", "should", "you can", "allows", "provides", "supports", "recommend", "```", "\n- ",
    "\n* ", "\n1.",
)


def prose_error(text: str) -> str | None:
    """A short free-text answer that reports a failure rather than telling what a page says:
    it speaks an error family beyond the bare word "error" and describes nothing."""
    stripped = text.strip()
    if len(stripped) >= 200:
        return None
    low = stripped.lower()
    if any(d in low for d in _DESCRIBES):
        return None
    got = family(stripped)
    return got if got not in (None, "failure") else None


def webfetch_error(result: str) -> str | None:
    stripped = result.strip()
    got = strong_error(stripped)
    if got:
        return got
    if stripped[:20].lower().startswith(("<!doctype", "<html")) and len(stripped) < 4000:
        return "html page"
    if len(stripped) < 500:
        low = stripped.lower()
        if any(p in low for p in _FETCH_FAIL_PHRASES):
            return family(stripped) or "fetch failed"
    return prose_error(stripped)


# ---------------------------------------------------------------- what a page is

# A bot-check interstitial (Cloudflare's and its imitators') stands in for the page asked
# for. Its title or opening line says so, and its few lines speak of the browser check.
_INTERSTITIAL_OPENINGS = (
    "just a moment", "attention required", "checking your browser", "please wait while we",
    "checking if the site connection is secure", "verify you are human",
    "performing security verification", "one more step", "ddos protection by",
)
_INTERSTITIAL_PHRASES = (
    "just a moment", "checking your browser", "enable javascript and cookies to continue",
    "checking if the site connection is secure", "verify you are human",
    "needs to review the security of your connection", "performing security verification",
    "attention required", "please complete the security check", "ddos protection by",
    "please enable cookies", "please turn javascript on", "cloudflare ray id",
    "why have i been blocked", "completing the captcha",
)
_INTERSTITIAL_MARKERS = (
    "cf-challenge", "cf_chl_", "challenge-platform", "cf-browser-verification",
    "cf-turnstile", "__cf_chl", "cf-please-wait", "cf-error-details", "cf_clearance",
)
_INTERSTITIAL_HEAD = 8192
_INTERSTITIAL_SHORT = 4096  # visible text of a challenge page is a few lines
_INTERSTITIAL_TITLED = 32 * 1024  # a challenge page's HTML, scripts and all


def _opening_line(text: str) -> str:
    """The first non-blank line of `text` (at most 300 characters), with markdown heading
    and quote marks, and an HTML document's head up to its <title>, taken away."""
    head = text[:_INTERSTITIAL_HEAD].lstrip()
    low = head.lower()
    if low.startswith(("<!doctype", "<html", "<head", "<title", "<?xml")):
        start = low.find("<title")
        if start < 0:
            return ""
        start = low.find(">", start)
        end = low.find("</title", start)
        return low[start + 1:end if end > start else start + 301][:300].strip()
    first = low.split("\n", 1)[0][:300]
    return first.lstrip("#> *_\t").strip()


def interstitial(text: str, title: str | None = None) -> bool:
    """Whether a page is a bot-check interstitial ("Just a moment…", "Checking your
    browser", "Enable JavaScript and cookies to continue", cf-challenge) rather than the
    page asked for. Looks at the first 8 KiB only: linear and small."""
    stripped = text.strip()
    head = stripped[:_INTERSTITIAL_HEAD].lower()
    phrases = sum(1 for p in _INTERSTITIAL_PHRASES if p in head)
    marker = any(m in head for m in _INTERSTITIAL_MARKERS)
    opening = _opening_line(stripped)
    heading = (title or "").strip().lower()
    if opening.startswith(_INTERSTITIAL_OPENINGS) or heading.startswith(_INTERSTITIAL_OPENINGS):
        # titled as one: short, or speaking of the check, or carrying its markers
        return len(stripped) <= _INTERSTITIAL_TITLED and (
            len(stripped) <= _INTERSTITIAL_SHORT or phrases >= 2 or marker)
    if len(stripped) <= _INTERSTITIAL_SHORT:
        return phrases >= 2 or (phrases >= 1 and marker)
    return False


_EXA_HEADER_STARTS = ("# ", "url: ", "title: ", "published: ", "author: ", "published date: ")


def empty_fetch(text: str) -> bool:
    """EXA's answer for a page with no text ("The fetched content is empty…"), with or
    without the page's own header lines before it."""
    lines = text[:2048].strip().split("\n", 8)
    body_from = 0
    for i, ln in enumerate(lines[:6]):
        if ln.strip().lower().startswith(_EXA_HEADER_STARTS) or not ln.strip():
            body_from = i + 1
            continue
        break
    rest = "\n".join(lines[body_from:]).strip().lower()
    return rest.startswith(("the fetched content is empty", "fetched content is empty",
                            "the content is empty")) and len(text.strip()) < 1024


def document_error(text: str, title: str | None = None, source_tool: str | None = None) -> str | None:
    """Why a text offered as a stored document (from any door) is an error and not a
    document, or None: a bot-check interstitial, EXA's empty fetch, an HTML error page, a
    JSON error object, or a text of at most a few KB that opens like an error. A text with a
    document's shape (headings, code fences, Source: lines) counts as an error only when its
    prose is a short error; a short Context7 text without that shape, when it speaks an
    error family. The floor every door shares: each adapter is stricter for its own source.
    Linear: each check reads a bounded prefix."""
    stripped = text.strip()
    if not stripped:
        return "empty content"
    page = page_error(stripped, title)
    if page is not None:
        return page
    if len(stripped) > _SCAN:
        return None
    if c7_docs_shape(stripped):
        if "```" in stripped:
            return None
        body = prose(stripped)
        if len(body) < 300 and opens_like_error(body):
            return family(body) or "error"
        return None
    if opens_like_error(stripped):
        return family(stripped) or "error"
    if source_tool == "context7" and len(stripped) < SHORT_CHARS and (
            "library id:" not in stripped.lower()):
        # Context7 documentation has its shape (headings, code, Source: lines), a resolve
        # answer its library blocks; a short text with neither that speaks an error family
        # is the server's error text
        return family(stripped)
    return None
