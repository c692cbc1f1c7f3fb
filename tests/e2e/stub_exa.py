"""Stub EXA MCP server (stdio, standard library only) for the e2e tests.

``web_search_exa`` {query, numResults?} answers like exa-mcp-server 3.x: per
result ``Title:``, ``URL:``, ``Published:``, ``Author:``, ``Text:`` lines, results
separated by ``\\n\\n---\\n\\n``.  A query containing ``force-error`` answers
``isError: true`` (Claude Code then fires PostToolUseFailure).  Run as a script: ``python stub_exa.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _mcp_stdio import serve

EXA_PHRASE = "pelican throughput benchmark"

RESULTS = [
    {
        "Title": "Zod 3 performance notes",
        "URL": "https://exa-stub.invalid/zod-performance",
        "Published": "2024-05-01T00:00:00.000Z",
        "Author": "E2E Author",
        "Text": "Zod parses objects quickly when schemas are hoisted. The "
        + EXA_PHRASE
        + " shows safeParse at 2M ops/s on small objects.",
    },
    {
        "Title": "Validating forms with Zod",
        "URL": "https://exa-stub.invalid/zod-forms",
        "Published": "2024-03-12T00:00:00.000Z",
        "Author": "E2E Author",
        "Text": "Use z.object with refine for cross-field rules such as password confirmation.",
    },
]


# A query containing this word makes the stub fail with isError (→ PostToolUseFailure).
FAIL_WORD = "force-error"


def web_search(args: dict) -> str | tuple[str, bool]:
    if FAIL_WORD in str(args.get("query") or ""):
        return "Error searching Exa: 401 Unauthorized (stub)", True
    n = int(args.get("numResults") or len(RESULTS))
    return "\n\n---\n\n".join(
        "\n".join(f"{k}: {v}" for k, v in r.items()) for r in RESULTS[: max(1, n)]
    )


def web_fetch(args: dict) -> str:
    """exa-mcp-server 3.x page format: `# Title`, `URL: …`, blank line, text, per page."""
    urls = args.get("urls") or ([args["url"]] if args.get("url") else [])
    return "\n\n".join(
        f"# Page {i + 1}\nURL: {u}\n\nFetched text of {u}: the " + EXA_PHRASE + " in full."
        for i, u in enumerate(urls)
    )


TOOLS = [
    {
        "name": "web_search_exa",
        "description": "Search the web using Exa AI.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search query"},
                "numResults": {"type": "number", "description": "Number of results"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "web_fetch_exa",
        "description": "Fetch the content of web pages with Exa AI.",
        "inputSchema": {
            "type": "object",
            "properties": {"urls": {"type": "array", "items": {"type": "string"}}},
            "required": ["urls"],
        },
    },
]

if __name__ == "__main__":
    serve("exa-stub", "3.0.0-e2e", TOOLS, {"web_search_exa": web_search, "web_fetch_exa": web_fetch})
