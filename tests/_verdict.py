"""The cases of the one error verdict (memhooks.classify): honest answers a fallback must
never replace, the failures it must catch, each error family's whole form, and the error
pages and genuine short snippets every door must tell apart."""

from __future__ import annotations

RATE_ANON = ("Rate limited or quota exceeded. Create a free API key at https://context7.com/dashboard "
             "for higher limits.")
RATE_KEYED = "Rate limited or quota exceeded. Upgrade your plan at https://context7.com/plans for higher limits."
C7_UNAUTHORIZED = "Invalid API key. Please check your API key. API keys should start with 'ctx7sk' prefix."
C7_NOT_FINALIZED = (
    "Documentation not found or not finalized for this library. This might have happened because you "
    "used an invalid Context7-compatible library ID. To get a valid Context7-compatible library ID, use "
    "the 'resolve-library-id' with the package name you wish to retrieve documentation for.")

# Live Context7 answers that are answers: a fallback never replaces them.
HONEST_LIVE = [
    'No documentation found for the topic "api key rotation"',
    'No results for "network timeout"',
    "No content found for 'subscription cleanup'",
    'No documentation found for the topic "rate limit exceeded"',
    'No results for "Unauthorized"',
    'No results for "502 Bad Gateway"',
    "### Timeouts in effects\n\nIf your effect sets a timeout, clear it in the cleanup function so the "
    "timer never fires after the component unmounts.",
    "The request timeout option sets how long the client waits; rate limits apply per API key.",
    "Unauthorized requests are rejected with a 401; pass the key in the Authorization header.",
    "## Errors\n\n`429 Too Many Requests` means the quota is used up: back off, then retry.",
    "Quota exceeded errors mean the project used its daily allowance; raise it in the console.",
    C7_NOT_FINALIZED,
    "The library you are trying to access does not exist. Please try with a different library ID.",
]

# Live answers that are failures, as the tools write them: each falls back.
FAILED_LIVE = [
    ("rate limited", RATE_ANON),
    ("rate limited", RATE_KEYED),
    ("rate limited", "Error: Request failed with status code 429"),
    ("quota exceeded", "You have exceeded your daily request quota."),
    ("quota exceeded", "Quota exceeded for this API key."),
    ("unauthorized", C7_UNAUTHORIZED),
    ("unauthorized", "Unauthorized. Please check your API key."),
    ("http error", "Request failed with status 500. Please try again later."),
    ("http error", "Request failed with status 503. Please try again later."),
    ("http error", "Error: 502 Bad Gateway"),
    ("http error", "# 502 Bad Gateway\n\nnginx"),
    ("network error", "Error fetching library context. Please try again later. TypeError: fetch failed"),
    ("network error", "MCP error -32001: Request timed out"),
    ("http error", "Request to Context7 failed: 503"),
    ("http error", "Error: error code: 502"),
    ("http error", "Error: # 502 Bad Gateway\n\nnginx"),
    ("network error", '{"message": "Upstream timeout"}'),
    ("network error", "Failed to fetch URL: TypeError: fetch failed"),
]

# (family, the whole form, the family's phrase): the form falls back; the phrase alone inside
# prose, inside a query a no-results answer echoes, or the form with a sentence after it,
# does not.
FAMILY_TABLE = [
    ("rate limited", RATE_ANON, "rate limited or quota exceeded"),
    ("rate limited", "Too many requests, please slow down.", "too many requests"),
    ("rate limited", "Rate limit exceeded. Please try again later.", "rate limit exceeded"),
    ("quota exceeded", "Quota exceeded for this API key.", "quota exceeded"),
    ("quota exceeded", "You have exceeded your monthly request quota.", "exceeded your monthly request quota"),
    ("unauthorized", C7_UNAUTHORIZED, "invalid API key"),
    ("unauthorized", "Unauthorized", "unauthorized"),
    ("unauthorized", "Forbidden", "forbidden"),
    ("http error", "Request failed with status 503. Please try again later.", "request failed with status 503"),
    ("http error", "502 Bad Gateway", "502 Bad Gateway"),
    ("http error", "HTTP/1.1 500 Internal Server Error", "500 Internal Server Error"),
    ("http error", "Service Unavailable", "service unavailable"),
    ("network error", "Error fetching library context. Please try again later. TypeError: fetch failed",
     "fetch failed"),
    ("network error", "Error: connect ECONNREFUSED 127.0.0.1:443", "ECONNREFUSED"),
    ("network error", "Error: Request timed out after 30000ms", "request timed out"),
    ("network error", "Upstream timeout", "upstream timeout"),
    ("http error", "Request to Context7 failed: 503", "failed: 503"),
    ("http error", "error code: 502", "error code: 502"),
]


def not_whole(form: str, phrase: str) -> list[str]:
    """The texts that hold a family's phrase (or form) but are not the whole form."""
    return [
        f'When the server answers "{phrase}", wait a minute and retry the request.',
        f'No results for "{phrase}"',
        f'No documentation found for the topic "{phrase}"',
        f"### {phrase[:1].upper()}{phrase[1:]}\n\nWhat the message means and how to handle it in your client.",
        f"{form} This section explains what the message means for your app.",
        f"Note: {form}",
    ]


# Error pages that arrive as markdown or HTML (sent with status 200): refused at every door.
ERROR_PAGES_MD = [
    "# 502 Bad Gateway\n\nnginx",
    "# 503 Service Unavailable\n\nThe server is temporarily unable to service your request due to "
    "maintenance downtime or capacity problems. Please try again later.",
    "# 404 Not Found\n\nThe requested URL was not found on this server.\n\nApache/2.4.57 (Debian) Server "
    "at docs.example.org Port 443",
    "## 429 Too Many Requests\n\nYou have sent too many requests in a given amount of time. Try again later.",
    "# Sign in\n\nSign in to continue to Docs Portal.\n\nEmail address\n\nPassword\n\nForgot your password?",
]
ERROR_PAGES_HTML = [
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
    "</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
    "<!DOCTYPE html><html><head><title>503 Service Unavailable</title></head><body><h1>Service "
    "Unavailable</h1><p>The server is temporarily unable to service your request.</p></body></html>",
    "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\"><html><head><title>404 Not Found</title></head>"
    "<body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>",
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>429 Too Many Requests</title></head><body>"
    "<h1>429 Too Many Requests</h1><p>Slow down.</p></body></html>",
    "<!DOCTYPE html><html><head><title>Sign in · Docs Portal</title></head><body><main><h1>Sign in to Docs "
    "Portal</h1><form><label>Email</label><input name=\"email\"><label>Password</label><input "
    "type=\"password\"></form></main></body></html>",
]
ERROR_PAGES = ERROR_PAGES_MD + ERROR_PAGES_HTML

# Genuine short documentation: kept at every door.
SNIPPETS = [
    "### Timeouts in effects\n\nIf your effect sets a timeout, clear it in the cleanup function so the "
    "timer never fires after the component unmounts.",
    "### Timeouts\n\nSource: https://axios-http.com/docs/req_config\n\n`timeout` is the number of "
    "milliseconds before the request times out; a slower request is aborted.",
    "### Handling 429 Too Many Requests\n\nWhen the API answers 429, wait for the seconds in Retry-After "
    "before you retry.",
    "## Authentication\n\nPass your key in the `Authorization` header. A missing or invalid key gets 401 "
    "Unauthorized.",
    "`AbortSignal.timeout(ms)` returns a signal that aborts after `ms` milliseconds; pass it as `signal` "
    "to `fetch()`.",
    "### Not found pages\n\nExport a `NotFound` component from `app/not-found.tsx` to render your own 404 "
    "page.",
]
