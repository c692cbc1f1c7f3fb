"""Documentation sources by declaration: one table of rows, each saying how one docs server's
tools are captured and served (standard library only; a leaf, used on hot paths).

A row says, for a set of tool names:

* ``name``: the source name (the documents' ``source_tool``), a short lower-case word;
* ``server``: which MCP servers it covers: ``*`` (any), a server's whole name
  (``acme_docs``), or one word that must be a whole ``-``/``_``-separated word of the server's
  name (``docfork`` covers ``docfork``, ``docfork-mcp``, ``plugin_docfork_docfork``);
* ``tools``: tool-name patterns, where ``*`` stands for one or more of ``A-Za-z0-9_-``
  (``fetch_*_documentation``); a pattern may be a full name ``mcp__<server>__<tool>``, which
  also sets the server;
* ``key``: the arguments whose values form the key of a call (``url``, ``library``,
  ``query``, ``repoName``, ``page``…); none: the tool name alone is the key;
* ``url``: the key argument that holds the page's URL (stored as the document's URL);
* ``split``: how a result becomes documents: ``whole`` (one document), ``sections`` (cut at
  each line that starts with ``heading``, ``# `` by default, outside code fences), or
  ``json-list`` (a JSON list of objects; ``fields`` names their url, title and text);
* ``serve``: whether a repeated call with the same key may be answered from the store;
* ``type``: the documents' type (one of the store's document types).

The rows for the servers memhooks knows are here, in code (BUILTIN); a user adds rows of their
own to the settings file beside the store (``config.toml``), as ``[[docs_source]]`` tables::

    [[docs_source]]
    name = "acme"
    tools = ["mcp__acme_docs__read_page"]
    key = ["url"]
    url = "url"
    serve = true

Every row is checked when it is loaded (``check``): a bad row is reported (``memhooks
doctor``) and ignored, never a crash. Rows add to the hooks' matchers
(memhooks.tools) and pass the same admission and egress as every other door.
"""

from memhooks.config import file_settings

CONFIG_KEY = "docs_source"
RESERVED = frozenset({"context7", "exa", "webfetch", "websearch", "ctx7"})
SPLITS = ("whole", "sections", "json-list")
TYPES = ("library-docs", "web-page", "search-results", "code-context")
MAX_ROWS = 50
MAX_PATTERNS = 20
MAX_KEY_CHARS = 1500
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_TOOL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ARG_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_FIELDS = ("url", "title", "text")


class Row:
    """One checked row of the table."""

    __slots__ = ("name", "server", "tools", "key", "url", "split", "heading", "fields", "serve",
                 "type", "origin")

    def __init__(self, name: str, server: str, tools: tuple, key: tuple = (), url: str | None = None,
                 split: str = "whole", heading: str = "# ", fields: dict | None = None,
                 serve: bool = False, type: str | None = None, origin: str = "built-in"):
        self.name, self.server, self.tools, self.key, self.url = name, server, tools, key, url
        self.split, self.heading, self.serve, self.origin = split, heading, serve, origin
        self.fields = dict(fields or {f: f for f in _FIELDS})
        self.type = type or ("web-page" if url else "library-docs")

    def covers(self, server: str, tool: str) -> bool:
        return server_matches(server, self.server) and any(glob(p, tool) for p in self.tools)

    def __repr__(self) -> str:
        return f"Row({self.name!r}, {self.server!r}, {self.tools!r}, origin={self.origin!r})"


# ----------------------------------------------------------------------------- the known servers
#
# Read from each server's source (tool names, argument names, result shapes):
# * Ref, ref-tools/ref-tools-mcp index.ts: `ref_search_documentation {query}` answers one text
#   block per hit (`overview: …\nurl: …\nmoduleId: …`); `ref_read_url {url}` the page as
#   markdown. Its error texts: "Error reading URL: <axios message>", "Error during
#   documentation search: …", "Ref is not correctly configured…", "Please verify your email…",
#   "No results found" (memhooks.classify knows them).
# * Docfork, docfork/docfork-mcp: up to 1.4 `docfork_search_docs {query, docforkIdentifier?,
#   tokens?}` and `docfork_read_url {url}`; since 2.0 `query_docs {query, library, tokens?}`
#   (a header block, then `title: …\ndescription: …\nurl: …` blocks) and `fetch_url {url}`.
#   An API failure is thrown as "<status> <statusText>: <body>" (an MCP error result).
# * DeepWiki (the hosted server at mcp.deepwiki.com): `read_wiki_structure {repoName}` ("Available
#   pages for o/r:" and a list), `read_wiki_contents {repoName}` (every page, each opened by
#   `# Page: <title>`), `ask_question {repoName, question}`; results may arrive as the JSON
#   string of `structuredContent` (`{"result": "…"}`). "Repository not found. Visit
#   https://deepwiki.com to index it." is its error.
# * GitMCP, idosal/git-mcp: `fetch_<repo>_documentation` (no arguments; `_docs` for long repo
#   names), `search_<repo>_documentation {query}`, `search_<repo>_code {query, page?}`, on the
#   generic endpoint `fetch_generic_documentation {owner, repo}`,
#   `search_generic_documentation {owner, repo, query}`, `search_generic_code {owner, repo,
#   query, page?}`, and everywhere `fetch_generic_url_content {url}`. The server's name is the
#   user's choice: the rows cover any server.

BUILTIN: tuple = (
    Row("ref", "*", ("ref_read_url",), ("url",), url="url", serve=True),
    Row("ref", "*", ("ref_search_documentation",), ("query",), type="search-results"),
    Row("docfork", "*", ("docfork_read_url",), ("url",), url="url", serve=True),
    Row("docfork", "*", ("docfork_search_docs",), ("query", "docforkIdentifier", "tokens"),
        type="search-results"),
    Row("docfork", "docfork", ("fetch_url",), ("url",), url="url", serve=True),
    Row("docfork", "docfork", ("query_docs",), ("library", "query", "tokens"), type="search-results"),
    Row("deepwiki", "deepwiki", ("read_wiki_structure",), ("repoName",), serve=True),
    Row("deepwiki", "deepwiki", ("read_wiki_contents",), ("repoName",), split="sections",
        heading="# Page: ", serve=True),
    Row("deepwiki", "deepwiki", ("ask_question",), ("repoName", "question")),
    Row("gitmcp", "*", ("fetch_*_documentation", "fetch_*_docs"), ("owner", "repo"), serve=True),
    Row("gitmcp", "*", ("search_*_documentation", "search_*_docs"), ("owner", "repo", "query")),
    Row("gitmcp", "*", ("search_*_code",), ("owner", "repo", "query", "page"), type="code-context"),
    Row("gitmcp", "*", ("fetch_generic_url_content",), ("url",), url="url", serve=True),
)


# ----------------------------------------------------------------------------- names

def glob(pattern: str, name: str) -> bool:
    """Whether `name` matches `pattern`, where each `*` stands for one or more characters
    (the names are checked to be of A-Za-z0-9_- first). No regex: linear in the name."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return name == pattern
    first, last = parts[0], parts[-1]
    if not name.startswith(first):
        return False
    pos = len(first)
    for seg in parts[1:-1]:
        at = name.find(seg, pos + 1)
        if at < 0:
            return False
        pos = at + len(seg)
    return len(name) - len(last) >= pos + 1 and name.endswith(last)


def _words(server: str) -> list[str]:
    return server.lower().replace("-", "_").split("_")


def server_matches(server: str, want: str) -> bool:
    """`want`: `*`, the server's whole name (any case), or one word of it."""
    if want == "*":
        return True
    if server.lower() == want.lower():
        return True
    return "_" not in want and "-" not in want and want.lower() in _words(server)


def split_full(pattern: str) -> tuple[str, str] | None:
    """`mcp__<server>__<tool>` -> (server, tool pattern); None when it is not that form."""
    if not pattern.startswith("mcp__"):
        return None
    rest = pattern[5:]
    idx = rest.find("__")
    if idx <= 0 or not rest[idx + 2:]:
        return None
    return rest[:idx], rest[idx + 2:]


# ----------------------------------------------------------------------------- checking

def _is_name(value) -> bool:
    return (isinstance(value, str) and 2 <= len(value) <= 32 and value[0].isalpha()
            and value.isascii() and set(value) <= _NAME_CHARS)


def _is_server(value) -> bool:
    return isinstance(value, str) and (value == "*" or (
        0 < len(value) <= 64 and value.isascii() and set(value) <= _TOOL_CHARS
        and "__" not in value and value.strip("_-") == value))


def _is_tool_pattern(value) -> bool:
    return (isinstance(value, str) and 0 < len(value) <= 100 and value.isascii()
            and set(value) <= _TOOL_CHARS | {"*"} and "**" not in value)


def _is_arg(value) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 64 and value.isascii() and set(value) <= _ARG_CHARS


def check(raw, origin: str = "config.toml") -> tuple[Row | None, str | None]:
    """(row, None) for a good row, (None, why) for a bad one. Never raises."""
    if not isinstance(raw, dict):
        return None, "a row is a table of keys"
    known = {"name", "server", "tools", "key", "url", "split", "heading", "fields", "serve", "type"}
    extra = sorted(str(k) for k in raw if k not in known)
    if extra:
        return None, f"unknown keys: {', '.join(extra)[:200]}"
    name = raw.get("name")
    if not isinstance(name, str) or not _is_name(name):
        return None, "name: 2-32 lower-case letters, digits or '-', starting with a letter"
    if name in RESERVED:
        return None, f"name {name!r} is memhooks' own source"
    tools = raw.get("tools")
    if isinstance(tools, str):
        tools = [tools]
    if not isinstance(tools, list) or not tools or len(tools) > MAX_PATTERNS:
        return None, f"tools: a list of 1 to {MAX_PATTERNS} tool-name patterns"
    server = raw.get("server")
    patterns: list[str] = []
    for t in tools:
        full = split_full(t) if isinstance(t, str) else None
        if full:
            if server is not None and server != full[0]:
                return None, f"tool {t!r} names another server than {server!r}"
            server, t = full
        if not _is_tool_pattern(t):
            return None, f"tools: {str(t)[:80]!r} is not a tool-name pattern (A-Za-z0-9_- and *)"
        patterns.append(t)
    if server is None:
        return None, "server: the server's name, one word of it, or * (or full tool names)"
    if not _is_server(server):
        return None, f"server: {str(server)[:80]!r} is not a server name"
    if server == "*" and any(set(p) <= {"*"} for p in patterns):
        return None, "a row for any server must name its tools (not just *)"
    key = raw.get("key", [])
    if isinstance(key, str):
        key = [key]
    if not isinstance(key, list) or len(key) > 6 or not all(_is_arg(k) for k in key) or len(set(key)) != len(key):
        return None, "key: a list of at most 6 argument names"
    url = raw.get("url")
    if url is not None and (not _is_arg(url) or url not in key):
        return None, "url: the name of one of the key's arguments"
    split = raw.get("split", "whole")
    if split not in SPLITS:
        return None, f"split: one of {', '.join(SPLITS)}"
    heading = raw.get("heading", "# ")
    if not isinstance(heading, str) or not 1 <= len(heading) <= 40 or "\n" in heading or not heading.strip():
        return None, "heading: the text a section's first line starts with (1-40 characters)"
    fields = raw.get("fields", {})
    if not isinstance(fields, dict) or not set(fields) <= set(_FIELDS) or not all(_is_arg(v) for v in fields.values()):
        return None, "fields: a table mapping url, title and text to the list items' keys"
    serve = raw.get("serve", False)
    if not isinstance(serve, bool):
        return None, "serve: true or false"
    dtype = raw.get("type")
    if dtype is not None and dtype not in TYPES:
        return None, f"type: one of {', '.join(TYPES)}"
    return Row(name, server, tuple(patterns), tuple(key), url, split, heading,
               {f: fields.get(f, f) for f in _FIELDS}, serve, dtype, origin), None


# ----------------------------------------------------------------------------- the table

_CACHE: list = [None, (), ()]  # (the settings dict it was built from, rows, problems)


def user_rows(settings: dict | None = None) -> tuple[tuple, tuple]:
    """(rows, problems) from the settings file's ``[[docs_source]]`` tables; each problem is
    (row number, why). Read again only when the settings file changed."""
    values = file_settings() if settings is None else settings
    if settings is None and _CACHE[0] is values:
        return _CACHE[1], _CACHE[2]
    raw = values.get(CONFIG_KEY) if isinstance(values, dict) else None
    rows: list[Row] = []
    problems: list[tuple[int, str]] = []
    if raw is not None:
        items = raw if isinstance(raw, list) else [raw]
        for i, item in enumerate(items[:MAX_ROWS], 1):
            try:
                row, why = check(item)
            except Exception as exc:  # noqa: BLE001 - a bad row is reported, never a crash
                row, why = None, f"unreadable row ({type(exc).__name__})"
            if row is None:
                problems.append((i, why or "bad row"))
            else:
                rows.append(row)
        if len(items) > MAX_ROWS:
            problems.append((MAX_ROWS + 1, f"more than {MAX_ROWS} rows: the rest are ignored"))
    if settings is None:
        _CACHE[:] = [values, tuple(rows), tuple(problems)]
    return tuple(rows), tuple(problems)


def rows() -> tuple:
    """Every row in effect: the built-in ones, then the user's."""
    return BUILTIN + user_rows()[0]


def source_names() -> frozenset:
    """The names of the rows in effect."""
    return frozenset(row.name for row in rows())


def find(server: str | None, tool: str, table: tuple | None = None) -> Row | None:
    """The first row covering (server, tool), or None (built-in tools are not asked here)."""
    if not server or not tool or len(tool) > 200:
        return None
    if not tool.isascii() or not set(tool) <= _TOOL_CHARS:
        return None
    for row in rows() if table is None else table:
        if row.covers(server, tool):
            return row
    return None


# ----------------------------------------------------------------------------- the key of a call

def _value(value) -> str | None:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return " ".join(value.split())
    return None  # a list or an object: no key (never captured for serving)


def call_source(row: Row, server: str, tool: str, args) -> str | None:
    """The key of one call, as the documents' `source`: `<name>:<server>/<tool>` (the server
    lower-cased: a tool of one server never answers for another's) and each key argument's
    value (`url=https://…`), or None when it has none (an argument that is a list or an
    object, or a key too long)."""
    if not isinstance(args, dict):
        args = {}
    parts = [f"{row.name}:{server.lower()}/{tool}"]
    for k in row.key:
        v = _value(args.get(k))
        if v is None:
            return None
        if v:
            parts.append(f"{k}={v}")
    text = " ".join(parts)
    return text if len(text) <= MAX_KEY_CHARS else None
