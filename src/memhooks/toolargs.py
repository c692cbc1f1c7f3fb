"""What a tool call asks for, read the way the live server reads its arguments (standard
library only; used on hot paths).

Capture (the adapters) and serving (PreToolUse) build their keys from these functions, so a
call is keyed by what the server acted on, never by another spelling of it:

* Context7 `query-docs` (upstash/context7 packages/mcp/src/index.ts, `aliasArgs`): when
  `libraryId` is absent, the first of `context7CompatibleLibraryID`, `libraryID`,
  `libraryName` present stands for it; `query` likewise from `userQuery`, `question` (every
  tool). A canonical key that is present wins, whatever its value. Legacy 1.x
  `get-library-docs` took `context7CompatibleLibraryID` and `topic`.
* EXA `web_fetch_exa` / `crawling_exa` (exa-mcp-server webFetch.ts): `urls`, a list, or a
  string the server reads as a JSON list or as one URL; older `crawling_exa` took `url`.
* WebFetch: `url`, `prompt`, and `offset` (paging through a long page; absent means 0).
"""

from memhooks._jsonlite import loads

QUERY_DOCS_ID_KEYS = ("libraryId", "context7CompatibleLibraryID", "libraryID", "libraryName")
LEGACY_DOCS_ID_KEYS = ("context7CompatibleLibraryID", "libraryId", "libraryID", "libraryName")
QUERY_KEYS = ("query", "userQuery", "question")
MAX_FETCH_URLS = 50
#: in the metadata of a page an EXA fetch stored: keyed by a URL the agent asked for (the
#: only pages serving answers an EXA fetch with)
EXA_KEYED_BY = "asked-url"


def _aliased(args: dict, keys: tuple):
    """The value of the first key of `keys` present in `args` (None when none is)."""
    for key in keys:
        if key in args:
            return args[key]
    return None


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def context7_docs_args(tool: str, args) -> tuple[str, str]:
    """(library ID, topic) of a Context7 docs call, each stripped ('' when missing): the
    spelling the server acts on. `query-docs`: `libraryId` and `query` (aliases resolved as
    the server does); legacy `get-library-docs`: `context7CompatibleLibraryID` and `topic`."""
    if not isinstance(args, dict):
        return "", ""
    if tool == "get-library-docs":
        library_id = _text(_aliased(args, LEGACY_DOCS_ID_KEYS))
        topic = _text(args.get("topic")) or _text(_aliased(args, QUERY_KEYS))
        return library_id, topic
    return _text(_aliased(args, QUERY_DOCS_ID_KEYS)), _text(_aliased(args, QUERY_KEYS))


def with_docs_library_id(tool: str, args: dict, library_id: str) -> dict:
    """The arguments of a Context7 docs call asking for `library_id` instead: the key the
    server reads the ID from (`context7_docs_args`'s order) gets the new value, every other
    argument is kept as it was."""
    keys = LEGACY_DOCS_ID_KEYS if tool == "get-library-docs" else QUERY_DOCS_ID_KEYS
    out = dict(args)
    out[next((k for k in keys if k in args), keys[0])] = library_id
    return out


def exa_fetch_urls(args) -> list[str] | None:
    """The URLs an EXA page fetch asked for, stripped, in order, each once; None when the call
    names none (or names something that is not a URL list)."""
    if not isinstance(args, dict):
        return None
    urls = args.get("urls")
    if urls is None and "url" in args:
        urls = [args.get("url")]
    if isinstance(urls, str):
        # exa-mcp-server: JSON.parse of the string, else the string as the one URL
        text = urls.strip()
        parsed = None
        if text.startswith("["):
            try:
                parsed = loads(text)
            except (TypeError, ValueError, RecursionError):
                parsed = None
        urls = parsed if isinstance(parsed, list) else [urls]
    if not isinstance(urls, list) or not urls or len(urls) > MAX_FETCH_URLS:
        return None
    out: list[str] = []
    for url in urls:
        if not isinstance(url, str) or not url.strip() or len(url) > 4000:
            return None
        if url.strip() not in out:
            out.append(url.strip())
    return out


def webfetch_offset(args) -> int | None:
    """WebFetch's `offset` as a non-negative integer (absent or null: 0); None when it is
    something else (such a call has no key: it is never served)."""
    if not isinstance(args, dict):
        return None
    value = args.get("offset")
    if value is None:
        return 0
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return None
