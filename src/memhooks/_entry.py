"""Single entry file for hooks and shims: `python [-I -S] .../memhooks/_entry.py CMD [ARGS]`.

It puts the folder holding the `memhooks` package first on sys.path, so a
source checkout (plugin install) and site-packages (pip install) both work
under `-I -S`, where site-packages is not on the path. Standard library only.
"""

import os
import sys


def _setup_path() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    parent = os.path.dirname(here)
    # Running a file puts its own folder first; drop it so `memhooks/*.py`
    # never shadows a top-level module.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if parent not in sys.path:
        sys.path.insert(0, parent)


def main(argv: list[str]) -> int:
    # Hooks start a fresh interpreter for every tool call: keep the compiled
    # modules even where PYTHONDONTWRITEBYTECODE is set (no-op if unwritable).
    sys.dont_write_bytecode = False
    _setup_path()
    cmd, args = (argv[0] if argv else ""), argv[1:]
    if cmd in ("post-tool-use", "pre-tool-use", "session-start", "lc-cache-write", "ingest"):
        # A file-size limit (a full quota) must surface as an error we handle,
        # not as a signal that kills the hook.
        import signal

        if hasattr(signal, "SIGXFSZ"):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if cmd == "post-tool-use":
        from memhooks.capture.hooks import post_tool_use

        return post_tool_use()
    if cmd == "pre-tool-use":
        from memhooks.recall.serve import pre_tool_use

        return pre_tool_use()
    if cmd == "session-start":
        from memhooks.capture.hooks import session_start

        return session_start()
    if cmd in ("lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write"):
        from memhooks.recall import lc_cache as cache

        return cache.COMMANDS[cmd](args)
    if cmd == "ingest":
        from memhooks.capture.ingester import main as ingest_main

        return ingest_main(args)
    if cmd == "mcp":
        from memhooks.recall.mcp_server import main as mcp_main

        return mcp_main(args)
    sys.stderr.write(f"memhooks: unknown entry command {cmd!r}\n")
    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException as exc:  # noqa: BLE001 - entry points never print tracebacks
        code = 0
        if sys.argv[1:2] == ["mcp"] and not isinstance(exc, (KeyboardInterrupt, SystemExit)):
            # The MCP server is not a hook: say in one line why it cannot start.
            sys.stderr.write(f"memhooks mcp: {type(exc).__name__}: {exc}\n")
            code = 1
        elif isinstance(exc, SystemExit) and sys.argv[1:2] == ["mcp"]:
            code = exc.code if isinstance(exc.code, int) else 1
    sys.exit(code)
