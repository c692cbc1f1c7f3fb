"""Which tool calls memhooks captures (standard library only; used on hot paths).

One source of truth for the routing predicate (the capture hook, the ingester's
adapters) and for the hooks.json matcher strings (the plugin's hooks.json and
what `memhooks install` writes; a test keeps them equal and runs the matchers in
Node's regex engine, which is what Claude Code uses).

Tool names: ``mcp__<server>__<tool>`` and, for servers bundled in a plugin,
``mcp__plugin_<plugin>_<server>__<tool>`` (characters outside ``A-Za-z0-9_-``
become ``_``). A server is Context7's or EXA's when ``context7`` / ``exa`` is a
whole ``-``/``_``-separated word of its name (``context7``, ``Context7``,
``upstash-context7``, ``exa``, ``exa-mcp``, ``plugin_exa_exa``), never a part of
a word (``example-server``, ``hexagon``, ``texas_db``). Context7's own tool names
(``resolve-library-id``, ``query-docs``, ``get-library-docs``) and EXA's
``…_exa`` tools are captured whatever the server is called.

Other docs servers (Ref, Docfork, DeepWiki, GitMCP, a user's own) are rows of one table
(memhooks.doc_sources): their tools route to "declared", and the matchers are the fixed part
above plus a part generated from the rows (``tool_matcher`` / ``serve_matcher``; the plugin's
hooks.json is written by scripts/gen_hooks_json.py, `memhooks install` adds the user's rows).
"""

from memhooks import doc_sources

CONTEXT7_TOOLS = frozenset({"resolve-library-id", "query-docs", "get-library-docs"})
BUILTINS = frozenset({"WebFetch", "WebSearch"})

# ------------------------------------------------------------------ matchers (JavaScript regex)
# Valid in JavaScript and Python alike, no flags: case is spelled out per letter.
_C7 = "[Cc][Oo][Nn][Tt][Ee][Xx][Tt]7"
_EXA = "[Ee][Xx][Aa]"
_WORD = "[A-Za-z0-9]+"
# The server part: words separated by single "-" or "_", one of them context7 or exa.
_SERVER = f"(?:{_WORD}[-_])*(?:{_C7}|{_EXA})(?:[-_]{_WORD})*"
# Any server name (no "__" inside, as Claude Code splits the name at the first "__").
_ANY_SERVER = f"(?:{_WORD}[-_])*{_WORD}"
_C7_TOOLS = "resolve-library-id|query-docs|get-library-docs"

# The fixed part: Context7, EXA and the built-in tools (kept as hooks.json has always had it).
CORE_TOOL_MATCHER = (
    f"^mcp__{_SERVER}__[A-Za-z0-9_-]+$"
    f"|^mcp__{_ANY_SERVER}__(?:{_C7_TOOLS}|[A-Za-z0-9_-]+_{_EXA})$"
    "|^WebFetch$|^WebSearch$"
)


def _ci(text: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in text)


def _server_re(want: str) -> str:
    if want == "*":
        return _ANY_SERVER
    if "_" in want or "-" in want:  # a whole name (a plugin's form too)
        return f"(?:plugin_(?:{_WORD}[-_])*)?{_ci(want)}"
    return f"(?:{_WORD}[-_])*{_ci(want)}(?:[-_]{_WORD})*"


def rows_matcher(rows, serving: bool = False) -> str:
    """The matcher part for the declared docs sources' rows (memhooks.doc_sources): one
    alternative per server rule, its tools' patterns (`*`: one or more name characters)."""
    by_server: dict[str, list[str]] = {}
    for row in rows:
        if serving and not row.serve:
            continue
        tools = by_server.setdefault(row.server, [])
        for pattern in row.tools:
            alt = pattern.replace("*", "[A-Za-z0-9_-]+")
            if alt not in tools:
                tools.append(alt)
    return "|".join(f"^mcp__{_server_re(server)}__(?:{'|'.join(tools)})$"
                    for server, tools in by_server.items() if tools)


# Bash: every call reaches the hooks, which take only a Context7 CLI lookup (`ctx7 library|docs
# …`, memhooks.ctx7_command) and leave any other command alone, at a byte check first.
BASH_MATCHER = "^Bash$"
#: tools whose calls reach the hooks (the matchers let them through) but are taken or left by
#: what the call does, not by the tool's name (`is_captured` is False for them)
BY_COMMAND = frozenset({"Bash"})


def tool_matcher(rows=doc_sources.BUILTIN) -> str:
    """The PostToolUse / PostToolUseFailure matcher: the fixed part, the rows', Bash."""
    extra = rows_matcher(rows)
    return CORE_TOOL_MATCHER + (f"|{extra}" if extra else "") + f"|{BASH_MATCHER}"


TOOL_MATCHER = tool_matcher()
# PreToolUse (serving from the store): only the tools it can answer, on a server named as for
# capture (context7 / exa a whole word of the name, plugin forms included).
_SERVER_C7 = f"(?:{_WORD}[-_])*{_C7}(?:[-_]{_WORD})*"
_SERVER_EXA = f"(?:{_WORD}[-_])*{_EXA}(?:[-_]{_WORD})*"
CORE_SERVE_MATCHER = (
    f"^mcp__{_SERVER_C7}__(?:{_C7_TOOLS})$"
    f"|^mcp__{_SERVER_EXA}__(?:web_fetch_exa|crawling_exa)$|^WebFetch$"
)


def serve_matcher(rows=doc_sources.BUILTIN) -> str:
    """The PreToolUse matcher: the fixed part, the rows that may be served, Bash."""
    extra = rows_matcher(rows, serving=True)
    return CORE_SERVE_MATCHER + (f"|{extra}" if extra else "") + f"|{BASH_MATCHER}"


SERVE_MATCHER = serve_matcher()
SESSION_MATCHER = "startup|resume|clear|compact|fork"


# ------------------------------------------------------------------ routing (Python)

def parse_tool_name(tool_name) -> tuple[str | None, str]:
    """Split a Claude Code tool name into ``(server, tool)``.

    ``mcp__<server>__<tool>`` -> (server, tool) (split at the first ``__`` after
    the server, as Claude Code does); ``mcp__plugin_<plugin>_<server>__<tool>``
    -> (server, tool); built-ins -> (None, name).
    """
    if not isinstance(tool_name, str):
        return (None, "")
    name = tool_name.strip()
    if not name.startswith("mcp__"):
        return (None, name)
    rest = name[len("mcp__"):]
    idx = rest.find("__")
    if idx <= 0:
        return (None, name) if idx < 0 else (None, rest[2:])
    server, tool = rest[:idx], rest[idx + 2:]
    if server.startswith("plugin_") and len(server) > len("plugin_"):
        server = _plugin_server(server[len("plugin_"):])
    return (server, tool)


def _plugin_server(pair: str) -> str:
    """``<plugin>_<server>`` -> server. Both halves may contain ``_``: the common case is
    plugin == server (``context7_context7``); otherwise the plugin name is taken to have
    no ``_`` (plugin names are kebab-case by convention)."""
    n = len(pair)
    if n % 2 == 1:
        half = n // 2
        if pair[half] == "_" and pair[:half] == pair[half + 1:]:
            return pair[half + 1:]
    head, sep, tail = pair.partition("_")
    return tail if sep and tail else pair


def _words(server: str) -> list[str]:
    return server.lower().replace("-", "_").split("_")


def _is_word_list(server: str) -> bool:
    return all(w and w.isascii() and w.isalnum() for w in server.replace("-", "_").split("_"))


def server_has_word(server: str, word: str) -> bool:
    """Whether `word` (lower case) is a whole ``-``/``_``-separated word of a server name."""
    return _is_word_list(server) and word in _words(server)


def classify(server: str | None, tool: str) -> str | None:
    """Which adapter handles (server, tool): "context7" | "exa" | "web" | "declared" (a row
    of the docs sources' table, memhooks.doc_sources) | None."""
    if server is None:
        return "web" if tool in BUILTINS else None
    if tool in CONTEXT7_TOOLS:
        return "context7"
    words = _words(server) if _is_word_list(server) else []
    if "context7" in words:
        return "context7"
    if "exa" in words or (tool.lower().endswith("_exa") and len(tool) > 4):
        return "exa"
    if words and doc_sources.find(server, tool) is not None:
        return "declared"
    return None


def is_captured(tool_name) -> bool:
    """True when a tool call's content is captured (the rest is journaled as metadata).
    The same answer as the ingester's routing; TOOL_MATCHER lets through the same names
    (and, for a plugin whose own name has the word context7/exa, its other servers too)."""
    if not isinstance(tool_name, str) or tool_name != tool_name.strip():
        return False
    if tool_name in BUILTINS:
        return True
    if not tool_name.startswith("mcp__"):
        return False
    rest = tool_name[5:]
    idx = rest.find("__")
    tool = rest[idx + 2:] if idx > 0 else ""
    if not tool or not _is_word_list(rest[:idx]):
        return False
    if not all(c.isascii() and (c.isalnum() or c in "_-") for c in tool):
        return False
    server, tool = parse_tool_name(tool_name)
    return server is not None and classify(server, tool) is not None
