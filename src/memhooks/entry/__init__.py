"""memhooks' processes, one module each: the hooks (post_tool_use, pre_tool_use, session_start),
the lc-cache-* commands (lc_cache), the detached ingester (ingester) and the MCP server (mcp).

A module here reads stdin, the environment and argv, composes the library below it and decides
the exit code and stdout, behind the one boundary in memhooks.entry._boundary. Only this room
(with _launch and bootstrap) imports inside functions, so that each process loads just its own
path (the hot paths under `python -I -S`, standard library only). Nothing runs on import.
"""
