"""Stub Context7 MCP server (stdio, standard library only) for the e2e tests.

Tools and text formats follow @upstash/context7-mcp 4.x (see
shared/reference/context7-and-exa.md):

* ``resolve-library-id`` {libraryName, query} → ``Available Libraries:`` and
  ``- Key: value`` blocks separated by ``\\n----------\\n``.
* ``query-docs`` {libraryId, query} → the raw docs markdown (``### Title``,
  ``Source: <url>``, description, fenced code), containing ``DOCS_PHRASE``.
* ``STUB_C7_FAIL=rate-limit`` in the environment: every ``query-docs`` answers Context7's
  rate-limit text as ordinary text (``RATE_LIMITED``, no ``isError``), except the queries
  listed (``\n``-separated) in ``STUB_C7_ISERROR``, which get it with ``isError: true``
  (the CLI then fires PostToolUseFailure).

Run as a script: ``python stub_context7.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _mcp_stdio import serve

# A phrase that only the query-docs answer contains (tests search for it).
DOCS_PHRASE = "flamingo teardown ritual"
# The phrase of the one versioned ID's answer (/facebook/react/v18.3.1: version pinning).
PINNED_PHRASE = "heron pinning rehearsal"

LIBRARIES = {
    "react": [
        {
            "Title": "React",
            "Context7-compatible library ID": "/facebook/react",
            "Description": "The library for web and native user interfaces.",
            "Code Snippets": "3200",
            "Source Reputation": "High",
            "Benchmark Score": "91.5",
            "Versions": "v18.3.1, v19.0.0",
        },
        {
            "Title": "React Native",
            "Context7-compatible library ID": "/facebook/react-native",
            "Description": "A framework for building native applications using React.",
            "Code Snippets": "1800",
            "Source Reputation": "High",
            "Benchmark Score": "84.2",
        },
    ],
    "zod": [
        {
            "Title": "Zod",
            "Context7-compatible library ID": "/colinhacks/zod",
            "Description": "TypeScript-first schema validation with static type inference.",
            "Code Snippets": "620",
            "Source Reputation": "High",
            "Benchmark Score": "88.1",
        }
    ],
}

DOCS = {
    "/facebook/react": """### useEffect cleanup function

Source: https://react.dev/reference/react/useEffect

Return a cleanup function from your Effect. React calls it before the Effect runs
again and once more when the component unmounts. Think of it as the """ + DOCS_PHRASE + """:
every subscription the setup opened must be closed by the cleanup.

```js
useEffect(() => {
  const connection = createConnection(serverUrl, roomId);
  connection.connect();
  return () => {
    connection.disconnect();
  };
}, [serverUrl, roomId]);
```

--------------------------------

### Cleanup with an AbortController

Source: https://react.dev/learn/synchronizing-with-effects

Abort in-flight requests in the cleanup so stale responses never set state.

```js
useEffect(() => {
  const controller = new AbortController();
  fetch(url, { signal: controller.signal }).then(r => r.json()).then(setData);
  return () => controller.abort();
}, [url]);
```
""",
    "/facebook/react/v18.3.1": """### The """ + PINNED_PHRASE + """ (React 18.3.1)

Source: https://18.react.dev/reference/react/useEffect

Only the React 18.3.1 documentation describes the """ + PINNED_PHRASE + """: effects that
read refs during render.

```js
useEffect(() => { ref.current = value; });
```
""",
}


def resolve(args: dict) -> str:
    name = str(args.get("libraryName") or "").strip().lower()
    libs = LIBRARIES.get(name)
    if not libs:
        return "No libraries found matching the provided name."
    blocks = ["\n".join(f"- {k}: {v}" for k, v in lib.items()) for lib in libs]
    return "Available Libraries:\n\n" + "\n----------\n".join(blocks)


RATE_LIMITED = ("Rate limited or quota exceeded. Upgrade your plan at https://context7.com/plans "
                "for higher limits.")


def query_docs(args: dict):
    if os.environ.get("STUB_C7_FAIL") == "rate-limit":
        failing = os.environ.get("STUB_C7_ISERROR", "").split("\n")
        return (RATE_LIMITED, True) if args.get("query") in failing else RATE_LIMITED
    lib = args.get("libraryId") or args.get("context7CompatibleLibraryID") or args.get("libraryID") or ""
    text = DOCS.get(str(lib).split("@")[0].rstrip("/"))
    if text is None:
        return "The library you are trying to access does not exist. Please try with a different library ID."
    return text


TOOLS = [
    {
        "name": "resolve-library-id",
        "description": "Resolves a package/product name to a Context7-compatible library ID.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "libraryName": {"type": "string", "description": "Library name to search for"},
                "query": {"type": "string", "description": "What the user wants to do"},
            },
            "required": ["libraryName", "query"],
        },
    },
    {
        "name": "query-docs",
        "description": "Fetches up-to-date documentation for a library.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "libraryId": {"type": "string", "description": "Context7-compatible library ID"},
                "query": {"type": "string", "description": "The question or task"},
            },
            "required": ["libraryId", "query"],
        },
    },
]

if __name__ == "__main__":
    serve("context7-stub", "4.0.0-e2e", TOOLS, {"resolve-library-id": resolve, "query-docs": query_docs})
