"""A minimal stdio MCP server (JSON-RPC 2.0, newline-delimited), standard library only.

Used by the e2e stub servers (``stub_context7.py``, ``stub_exa.py``).  Handles
``initialize``, ``notifications/*``, ``ping``, ``tools/list`` and ``tools/call``;
any other request gets JSON-RPC error -32601.  When ``STUB_MCP_LOG`` is set, every
incoming message is appended to that file as one JSON line (tests read it to prove
the stub was called).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

Tool = dict  # {"name", "description", "inputSchema"}
Handler = Callable[[dict], "str | tuple[str, bool]"]


def _log(server: str, msg: dict) -> None:
    path = os.environ.get("STUB_MCP_LOG")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"server": server, "msg": msg}) + "\n")


def _send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def serve(name: str, version: str, tools: list[Tool], handlers: dict[str, Handler]) -> None:
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            _send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        _log(name, msg)
        method = msg.get("method")
        mid = msg.get("id")
        if mid is None:  # notification (notifications/initialized, cancelled, …)
            continue
        params = msg.get("params") or {}
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion") or "2025-06-18",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": name, "version": version},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            tool = params.get("name")
            fn = handlers.get(tool) if isinstance(tool, str) else None
            if fn is None:
                result = {"content": [{"type": "text", "text": f"Unknown tool: {tool}"}], "isError": True}
            else:
                out = fn(params.get("arguments") or {})
                text, is_error = out if isinstance(out, tuple) else (out, False)
                result = {"content": [{"type": "text", "text": text}]}
                if is_error:
                    result["isError"] = True
        elif method in ("resources/list", "prompts/list", "resources/templates/list"):
            key = {"resources/list": "resources", "prompts/list": "prompts"}.get(method, "resourceTemplates")
            result = {key: []}
        else:
            _send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"method not found: {method}"}})
            continue
        _send({"jsonrpc": "2.0", "id": mid, "result": result})
