"""Is a tool's answer an error? The one error verdict every door asks (pure functions, no IO;
a shared leaf module, standard library only: the adapters use it, admission in store/ uses it
for every door, lc-cache-write included, and the PostToolUse fallback asks `live_failure`).

Two questions, one set of forms. "Did the live call fail?" (`live_failure`, the fallback's
question) is answered yes only when the whole text is one of the error forms the tools write
(anchored at both ends, after the tools' wrappers): when unsure, the answer is no and the live
answer stays. "Is this a document?" (`document_error` and the adapters' checks, every door's
question) refuses those forms, the tools' "nothing found" answers, error pages (by their
heading or `<title>`), and short texts with no document shape that open like an error.

A short body counts as a document only when it has its source's positive shape (Context7
docs: markdown headings, code fences, ``Source:`` lines; resolve: library blocks; EXA:
result lists and pages). Whatever the source, an HTML error page, a JSON error object or a
text that opens like an error is never a document. Every check looks at a bounded prefix
of the text, so the cost is linear and small.
"""

from __future__ import annotations

import json
import re

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
    r"|aborterror|[a-z]{0,30}error:|(?:connect |read |write )?econn|enotfound|etimedout|eai_again|socket hang up|network ?error|timed? ?out\\b"
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
    heading = heading_error(stripped, title)
    if heading is not None:
        return f"error page ({heading})"
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
    heading = heading_error(stripped)
    if heading is not None:
        return f"error page ({heading})"
    form = error_form(stripped)
    if form is not None:
        return form
    if not c7_docs_shape(stripped):
        if len(stripped) < SHORT_CHARS:
            if "`" in stripped and not opens_like_error(stripped):
                return None  # a short API note: code spans are documentation's shape too
            return family(stripped) or "not documentation"
        return None
    return shaped_error(stripped)


def shaped_error(stripped: str) -> str | None:
    """For a text with documentation's shape (headings, code, Source: lines): an error only
    when it is a heading over an error message ("### Error" over "Rate limited or quota
    exceeded."), its prose being, whole, one of the tools' error forms. Whatever words a
    snippet's prose uses ("### Timeouts in effects …"), it is documentation."""
    if len(stripped) > _SCAN or "```" in stripped:
        return None
    body = prose(stripped)
    if len(body) < 300 and body:
        return error_form(body)
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
    JSON error object, a page whose heading names an HTTP error or a sign-in wall, a text
    that is whole one of the tools' error or "nothing found" forms, or a short text without
    a document's shape that opens like an error. A text with a document's shape (headings,
    code fences, Source: lines) counts as an error only when its prose is, whole, an error
    form; a short Context7 sentence without that shape (and no code span), when it reports
    a failure and describes nothing. The floor every door shares: each adapter may be
    stricter for its own source. Linear: each check reads a bounded prefix."""
    stripped = text.strip()
    if not stripped:
        return "empty content"
    page = page_error(stripped, title)
    if page is not None:
        return page
    if len(stripped) > _SCAN:
        return None
    form = error_form(stripped)
    if form is not None:
        return form
    if c7_docs_shape(stripped):
        return shaped_error(stripped)
    if opens_like_error(stripped):
        return family(stripped) or "error"
    if source_tool == "context7" and len(stripped) < SHORT_CHARS and (
            "library id:" not in stripped.lower()) and "`" not in stripped:
        # Context7 documentation has its shape (headings, code, Source: lines), a resolve
        # answer its library blocks; a short sentence with neither that reports a failure
        # and describes nothing is the server's error text
        return prose_error(stripped)
    return None


# ---------------------------------------------------------------- the verdict: failed or answered
#
# A tool's answer is a failure only when its whole text is one of the error forms the tools
# write (Context7's rate-limit, quota and unauthorized messages as its server writes them,
# an HTTP status line passed through, a network error), after the wrappers the tools put
# around them ("Error: ", "MCP error -32603: ", "Exa API error (429): "). A phrase of those
# forms inside prose, or inside a query a no-results answer echoes, is not the form: the text
# is an answer. Each form is anchored at both ends and bounded, so matching is linear.

RATE_LIMITED = "rate limited"
QUOTA = "quota exceeded"
UNAUTHORIZED = "unauthorized"
HTTP_ERROR = "http error"
NETWORK = "network error"
NOT_FOUND = "not found"
#: the families that mean "the live call failed" (a fallback may answer for it)
FAILURES = frozenset({RATE_LIMITED, QUOTA, UNAUTHORIZED, HTTP_ERROR, NETWORK})
_FORM_MAX = 1200  # no error form is longer than this

_WRAPPER = re.compile(
    r"(?:mcp error -?[0-9]{1,6}|context7(?: api)? error|context7 request failed"
    r"|exa(?: api)? error(?: \((?P<code>[0-9]{3})\))?|(?:advanced )?search error|crawling error"
    r"|web search error|search failed|error fetching url\(s\)|failed to fetch url|error searching libraries"
    r"|error fetching library context\. please try again later\.|failed to fetch documentation"
    r"|failed to retrieve library documentation data from context7"
    r"|request to context7 failed|error reading url|error during documentation search"
    r"|error fetching content from \S{1,2000}"
    r"|(?:type|fetch|abort|timeout|system|http|api)error|error|fatal)"
    r"(?: ?[:—-] ?| )", re.IGNORECASE)

_STATUS_PHRASES = (
    r"bad request|unauthori[sz]ed|payment required|forbidden|not found|method not allowed"
    r"|request time-?out|conflict|gone|too many requests|internal server error|not implemented"
    r"|bad gateway|service (?:temporarily )?unavailable|gateway time-?out|origin error"
    r"|web server is down|connection timed out|a timeout occurred|origin is unreachable"
    r"|access denied|internal error|server error|unknown error")
_REASON_OF_PHRASE = (
    ("too many requests", RATE_LIMITED), ("payment required", QUOTA),
    ("unauthori", UNAUTHORIZED), ("forbidden", UNAUTHORIZED), ("access denied", UNAUTHORIZED),
    ("not found", NOT_FOUND), ("internal", HTTP_ERROR), ("server error", HTTP_ERROR),
    ("bad gateway", HTTP_ERROR), ("unavailable", HTTP_ERROR), ("gateway time", HTTP_ERROR),
    ("timed out", NETWORK), ("timeout occurred", NETWORK), ("unreachable", NETWORK),
    ("web server is down", HTTP_ERROR), ("origin error", HTTP_ERROR),
)
# An HTTP status line: "502 Bad Gateway", "HTTP/1.1 503 Service Unavailable", "Error 522:
# Connection timed out", "HTTP 429: Too Many Requests", or a status phrase alone.
_STATUS_LINE = re.compile(
    rf"(?:(?:http(?:/[0-9.]{{1,3}})?|error|status(?: code)?) ?:? ?)?(?P<code>[0-9]{{3}})"
    rf"(?: ?[:—-] ?| )(?P<phrase>{_STATUS_PHRASES})\.?"
    rf"|(?P<bare>{_STATUS_PHRASES})\.?", re.IGNORECASE)
_STATUS_ONLY = re.compile(
    r"(?:request failed with status(?: code)?|server responded with|http(?: status)?|status(?: code)?"
    r"|error code:?|returned status) (?P<code>[0-9]{3,4})"
    r"(?:\. please try again later| \(?[a-z][a-z ]{0,40}\)?)?\.?", re.IGNORECASE)

# A status line with the response's body after it, as a client throws it:
# "${status} ${statusText}: ${body.slice(0, 500)}" (docfork-mcp's api/search.ts, api/read.ts).
_STATUS_PREFIX = re.compile(rf"(?P<code>[45][0-9][0-9]) (?:{_STATUS_PHRASES}): ", re.IGNORECASE)
_STATUS_BODY_MAX = 700

# (family, whole forms) — each form is matched whole, after the wrappers
_FORMS: tuple[tuple[str, re.Pattern], ...] = tuple(
    (name, re.compile("(?:" + "|".join(forms) + r")[ .!]{0,3}", re.IGNORECASE))
    for name, forms in (
        (RATE_LIMITED, (
            r"rate limited or quota exceeded\. (?:create a free api key|upgrade your plan) at \S{1,300}"
            r" for higher limits",
            r"rate limited or quota exceeded",
            r"(?:api )?rate[ _-]?limit(?:ed)?(?: exceeded| reached| hit)?(?: for \S{1,60})?"
            r"(?:[.,;] ?(?:please )?(?:try again later|try again in \d{1,6} ?(?:s|seconds?|minutes?)"
            r"|retry after \d{1,6} ?(?:s|seconds?)|slow down))?",
            r"too many requests(?:[.,;] ?(?:please )?(?:slow down|try again later))?",
            r"you (?:are being|have been|were|are) rate limited",
            r"you've hit exa's free mcp rate limit\.[^\n]{0,300}",
            r"error code: 1015",
        )),
        (QUOTA, (
            r"(?:your )?(?:daily |monthly |hourly )?(?:request |usage |api )?quota (?:has been )?"
            r"(?:exceeded|reached|exhausted|used up)(?: for this api key)?",
            r"you have exceeded your (?:daily |monthly |hourly )?(?:request |usage |api )?"
            r"(?:quota|limit|credits limit)",
            r"(?:daily |monthly )?(?:request |usage )?limit reached(?:\. upgrade your plan at \S{1,300})?",
            r"insufficient credits(?:\. please top up at \S{1,300})?",
            r"payment required", r"quota exhausted", r"credits exhausted",
            r"your free trial has ended",
        )),
        (UNAUTHORIZED, (
            r"invalid api key\. please check your api key\. api keys should start with 'ctx7sk' prefix",
            r"(?:invalid|missing|expired|revoked) api key(?:\. please check your api key)?",
            r"unauthori[sz]ed(?:\. please check your api key| - invalid api key)?",
            r"forbidden", r"access denied", r"invalid token\. please re-authenticate",
            r"authentication (?:failed|required)(?:: invalid credentials)?",
            r"your api key is invalid or has been revoked", r"(?:exa )?api key (?:is )?required"
            r"(?:\. get one at \S{1,300})?", r"please provide a valid api key",
            r"not authori[sz]ed",
            # Ref (ref-tools-mcp) without a key, or with an unverified account
            r"ref is not correctly configured\. reach out to \S{1,200} for help",
            r"please verify your email at \S{1,300} to (?:search documentation|read urls)",
        )),
        (HTTP_ERROR, (
            # GitMCP's search failures, under the heading it writes
            r"#{1,4} (?:code )?search results for: [^\n]{0,400}? (?:failed to search code in \S{1,300}\. github"
            r" api request failed|an error occurred while searching (?:the documentation\. please try"
            r" again later|code: [^\n]{0,300})|cannot perform code search without repository information)",
        )),
        (NETWORK, (
            r"fetch failed", r"failed to fetch",
            r"(?:connect |read |write )?(?:econnrefused|econnreset|etimedout|ehostunreach"
            r"|enetunreach|eai_again|econnaborted)(?: [\w.:\[\]-]{1,300})?",
            r"getaddrinfo (?:enotfound|eai_again) [\w.-]{1,253}",
            r"the operation was aborted(?: due to timeout)?",
            r"(?:request )?timed out(?: after \d{1,9} ?ms)?", r"(?:upstream |gateway )?timeout",
            r"timeout of \d{1,9} ?ms exceeded",
            r"request to \S{1,500} failed, reason: [^\n]{1,200}", r"socket hang up",
            r"network error", r"connection (?:refused|reset|timed out)",
            r"upstream connect error or disconnect/reset before headers\.[^\n]{0,200}",
            r"no healthy upstream", r"could not resolve host: [\w.-]{1,253}",
        )),
    )
)
# The tools' own "nothing found" answers, matched whole: answers, never failures.
_NOT_FOUND_FORMS = re.compile(
    r"(?:documentation not found or not finali[sz]ed for this library\.[^\n]{0,600}"
    r"|the library you are trying to access does not exist\.[^\n]{0,200}"
    r"|no (?:documentation )?libraries found matching (?:the provided name|your query)"
    r"|library \S{1,200} has been redirected to \S{1,200}[^\n]{0,200}"
    r"|repository not found\. visit \S{1,300} to index it"  # DeepWiki
    r"|content at \S{1,2000} could not be retrieved\. the resource may not exist or may require"
    r" authentication|access to \S{1,2000} is disallowed by robots\.txt\. gitmcp respects robots\.txt"
    r" directives|no owner/repo found for [^\n]{1,200}|no repository data provided"  # GitMCP
    r"|#{1,4} code search results for: [^\n]{0,400}? no code matches found in \S{1,300}"
    r"|no (?:documentation|results|content|search results|snippets)(?: (?:were )?found)?"
    r"(?: for:? (?:the topic )?[^\n]{1,400})?(?:\. please try a different query)?)[ .!]{0,3}",
    re.IGNORECASE)


def _code_family(code: int) -> str | None:
    if code in (429, 1015):
        return RATE_LIMITED
    if code == 402:
        return QUOTA
    if code in (401, 403, 407):
        return UNAUTHORIZED
    if code == 408 or 520 <= code <= 527:
        return NETWORK if code in (408, 522, 524) else HTTP_ERROR
    if 500 <= code <= 599:
        return HTTP_ERROR
    if code in (404, 410):
        return NOT_FOUND
    return None


def _unwrap(text: str) -> tuple[list[str], str | None]:
    """The text after each of the tools' wrappers in turn ("Error: error code: 502" is
    "error code: 502" once unwrapped, and "code: 502" twice: each stage is a candidate),
    and a family its wrapper names (Exa's code)."""
    named, stages = None, []
    for _ in range(4):
        m = _WRAPPER.match(text)
        if m is None or m.end() >= len(text):
            break
        if m.group("code") and named is None:
            named = _code_family(int(m.group("code")))
        text = text[m.end():].lstrip()
        stages.append(text)
    return stages, named


# After a wrapper, a status code alone ("Request to Context7 failed: 503") is a status line.
_BARE_CODE = re.compile(r"\(?(?:status(?: code)? )?(?P<code>[45][0-9]{2})\)?\.?", re.IGNORECASE)


def status_family(line: str) -> str | None:
    """The family of a whole HTTP status line ("502 Bad Gateway", "Request failed with
    status code 429", "Service Unavailable"), or None when the line is not one."""
    s = line.strip().strip("*_`#> \t").strip()
    if len(s) > 200:
        return None
    m = _STATUS_LINE.fullmatch(s)
    if m is not None:
        if m.group("code"):
            return _code_family(int(m.group("code"))) or HTTP_ERROR
        phrase = m.group("bare").lower()
        return next((fam for key, fam in _REASON_OF_PHRASE if key in phrase), HTTP_ERROR)
    m = _STATUS_ONLY.fullmatch(s)
    if m is not None:
        return _code_family(int(m.group("code")))
    return None


def error_form(text: str) -> str | None:
    """The family of a text that is, whole, one of the error forms the tools write: a
    failure family (FAILURES), NOT_FOUND for the tools' own "nothing found" answers, or
    None when the text is anything else (an answer)."""
    flat = " ".join(text[:_FORM_MAX + 1].split())
    if not flat or len(flat) > _FORM_MAX:
        return None
    if _NOT_FOUND_FORMS.fullmatch(flat):
        return NOT_FOUND
    stages, named = _unwrap(flat)
    body = stages[-1] if stages else flat
    if _NOT_FOUND_FORMS.fullmatch(body):
        return NOT_FOUND
    for candidate in (flat, *stages):
        for name, form in _FORMS:
            if form.fullmatch(candidate):
                return name
        got = status_family(candidate)
        if got is not None:
            return got
        if candidate is not flat:
            m = _BARE_CODE.fullmatch(candidate)
            got = _code_family(int(m.group("code"))) if m else None
            if got is not None:
                return got
    if named is None and len(body) <= _STATUS_BODY_MAX:
        m = _STATUS_PREFIX.match(body)
        if m is not None:  # "503 Service Unavailable: <the response body>" (Docfork's API errors)
            return _code_family(int(m.group("code"))) or HTTP_ERROR
    return named if named is not None and body and len(body) <= 200 and "\n" not in body else None


def _json_failure(text: str) -> str | None:
    """A JSON error object passed through whole: its status, or its message's form."""
    if len(text) > 16 * 1024:
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not obj or not {str(k).lower() for k in obj} <= (
            _JSON_ERROR_KEYS | {"tag", "error_code", "errorcode"}):
        return None
    inner = obj.get("error")
    if isinstance(inner, dict):
        obj = {**obj, **inner}
    for key in ("status", "statusCode", "status_code", "code"):
        value = obj.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) or (isinstance(value, str) and value.isdigit() and len(value) <= 4):
            got = _code_family(int(value))
            if got is not None:
                return got
    for key in ("message", "error", "detail", "msg", "title", "reason"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            got = error_form(value.replace("_", " "))
            if got is not None:
                return got
    return None


def _html_heads(text: str) -> list[str]:
    """The `<title>` and the first `<h1>` of an HTML page (bounded reads, no regex)."""
    low = text[:64 * 1024].lower()
    out = []
    for tag in ("title", "h1"):
        start = low.find("<" + tag)
        if start < 0:
            continue
        start = low.find(">", start)
        end = low.find("</" + tag, start)
        if start < 0 or end < 0 or end - start > 400:
            continue
        inner = text[start + 1:end]
        # tags inside a heading (<center><h1>…</h1>) are not its words
        words, depth = [], 0
        for ch in inner:
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth = max(0, depth - 1)
            elif not depth:
                words.append(ch)
        out.append(" ".join("".join(words).split()))
    return out


_SIGN_IN = re.compile(
    r"(?:please )?(?:sign|log) ?in(?: to (?:continue|your account|view this page|[\w.-]{1,40}))?"
    r"(?: (?:[|·–-]) [^\n]{1,60})?|login required|authentication required|access denied"
    r"|you need to sign in(?: or sign up)? before continuing\.?", re.IGNORECASE)


# Words of a few lines that explain something (documentation about a status), which the
# boilerplate of an error page ("The server is temporarily unable to service your request")
# never uses.
_EXPLAINS = ("mean", "how to", "handle", "for example", "e.g.", "use ", "using", "returns", "return ",
             "you can", "should", "`", "indicates", "status code", "explain", "see ", "configure",
             "function", "method", "option", "parameter", "header")


def heading_error(text: str, title: str | None = None) -> str | None:
    """An error page in markdown or HTML, by its heading: a page whose opening heading (or
    `<title>` / first `<h1>`, or the title it was stored under) is, whole, an HTTP status line
    ("# 502 Bad Gateway" over "nginx", "## 429 Too Many Requests", "# 404 Not Found") or a
    sign-in wall, with no more than a few lines of its own beside it. Documentation about a
    status keeps its shape (code, a Source: line, paragraphs) and is not one."""
    stripped = text.strip()
    if not stripped or len(stripped) > 128 * 1024:
        return None
    low = stripped[:32].lower()
    if low.startswith(("<!doctype", "<html", "<head", "<body", "<center", "<h1", "<title", "<?xml")):
        heads = _html_heads(stripped)
    else:
        if "```" in stripped or "\nSource: " in stripped or len(stripped) > 4000:
            return None
        first = stripped.split("\n", 1)[0].strip()
        if not first.startswith("#"):
            return None
        body = prose(stripped).lower()
        if len(body) > 400 or any(w in body for w in _EXPLAINS):
            return None  # a few lines that explain: documentation about the status
        heads = [first.lstrip("#").strip()]
    if title:
        heads.append(title)
    for head in heads:
        got = status_family(head)
        if got is not None:
            return got
        if _SIGN_IN.fullmatch(head.strip()):
            return "sign-in wall"
    return None


def live_failure(text: str) -> str | None:
    """Whether a tool's live answer says the call failed, by what the tool reported: its
    whole text is an error form of a failure family (rate limited, quota, unauthorized, an
    HTTP 5xx or status line, a network error), a JSON error object with such a status or
    message, an error page whose heading names such a status, or a bot-check interstitial.
    Anything else, a no-results answer or text with documentation's shape whatever words it
    holds, is an answer: None. When unsure, None (the live answer stays)."""
    stripped = text.strip()
    if not stripped:
        return None
    if stripped[0] == "{":
        got = _json_failure(stripped)
        return got if got in FAILURES else None
    if stripped[0] in "<#":
        if interstitial(stripped):
            return "bot-check interstitial"
        got = heading_error(stripped)
        return got if got in FAILURES else None
    got = error_form(stripped)
    if got is None and len(stripped) <= 128 * 1024:
        # a wrapper around a whole error page or JSON error object ("Error: # 502 Bad
        # Gateway" over "nginx"): the page or object decides, as it would bare
        m = _WRAPPER.match(stripped)
        rest = stripped[m.end():].lstrip() if m else ""
        if rest[:1] in ("{", "<", "#"):
            return live_failure(rest)
    return got if got in FAILURES else None


def fetched_page_error(raw: str) -> str | None:
    """Why a page fetched for `memhooks add`/`refresh`, as the server sent it (HTML before it
    is turned into text, or markdown), is an error page and not the page asked for: a
    bot-check interstitial, or a page whose `<title>`, first `<h1>` or opening heading names
    an HTTP error or a sign-in wall. The page's words elsewhere never decide (a genuine page's
    HTML speaks of errors in its scripts and prose)."""
    if interstitial(raw):
        return "bot-check interstitial"
    got = heading_error(raw)
    return f"error page ({got})" if got is not None else None
