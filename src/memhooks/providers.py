"""Which documentation provider a tool call goes to (standard library only; a leaf module).

The providers `memhooks stats` counts calls for, in the order it lists them: ``context7``
(its MCP tools, and the ``ctx7`` CLI's `library`/`docs` lookups through Bash: the same service,
the same budget, stored as the same knowledge), ``exa``, ``web`` (WebFetch and WebSearch),
``ref``, ``docfork``, ``deepwiki``, ``gitmcp``; a user's declared docs source
(memhooks.doc_sources) counts under its row's name.
"""

from memhooks import doc_sources
from memhooks.ctx7_command import parse as parse_ctx7
from memhooks.tools import classify, parse_tool_name

KNOWN = ("context7", "exa", "web", "ref", "docfork", "deepwiki", "gitmcp")
MAX_NAME = 40
#: the serve and fallback logs' tool kinds (memhooks.recall.failure.kind_of) by provider
_OF_KIND = {"context7-resolve": "context7", "context7-docs": "context7", "webfetch": "web",
            "exa-fetch": "exa"}
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def valid(name) -> bool:
    """A provider name as the store keeps it: a short lower-case word (`-` allowed)."""
    return (isinstance(name, str) and 0 < len(name) <= MAX_NAME and set(name) <= _NAME_CHARS)


def of_tool(tool_name, tool_input=None) -> str | None:
    """The provider a tool call goes to, or None for a tool memhooks does not capture (a Bash
    command that is not a ctx7 lookup included)."""
    if tool_name == "Bash":
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        return "context7" if parse_ctx7(command) is not None else None
    server, tool = parse_tool_name(tool_name)
    kind = classify(server, tool) if tool else None
    if kind in ("context7", "exa", "web"):
        return kind
    if kind == "declared":
        row = doc_sources.find(server, tool)
        return row.name if row is not None and valid(row.name) else None
    return None


def of_kind(kind) -> str | None:
    """The provider of a serve-log or fallback-log tool kind (`context7-docs`, `webfetch`,
    `exa-fetch`, or a declared source's name)."""
    if not isinstance(kind, str):
        return None
    got = _OF_KIND.get(kind, kind)
    return got if valid(got) else None
