"""What `_entry.py` runs: the hot paths' lean start, then the command (standard library only).

`_entry.py` itself stays a few lines: a script run by path is compiled from source on
every run (only imported modules keep their bytecode), and compiling this module took
~1.5 ms, a tenth of a lookup.
"""

import os
import sys


def _record_interpreter():
    """The shim found python3 by PATH: record the real interpreter behind it (a pyenv
    shim is a shell script costing tens of ms a call), so later calls skip the lookup."""
    target = os.environ.pop("MEMHOOKS_HOT_FILE", "")
    if not target or sys.version_info < (3, 11) or not os.path.isabs(target):
        return
    try:
        folder = os.path.dirname(target)
        if not os.path.isdir(folder):
            return  # no store folder yet: a read (lc-cache-lookup) never creates one
        tmp = "%s.%d" % (target, os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, (os.path.realpath(sys.executable) + "\n").encode())
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError:
        pass


HOT = ("post-tool-use", "pre-tool-use", "session-start", "lc-cache-lookup", "lc-cache-lookup-docs",
       "lc-cache-write")


def main(argv):
    # Hooks start a fresh interpreter for every tool call: keep the compiled
    # modules even where PYTHONDONTWRITEBYTECODE is set (no-op if unwritable).
    sys.dont_write_bytecode = False
    if "MEMHOOKS_HOT_FILE" in os.environ:
        _record_interpreter()
    cmd, args = (argv[0] if argv else ""), argv[1:]
    if sys.version_info < (3, 11):
        # Too old for memhooks: SessionStart in plugin mode says so once; all else is quiet.
        state = os.environ.get("MEMHOOKS_BOOTSTRAP_STATE", "")
        if cmd == "session-start" and state:
            from memhooks import bootstrap

            return bootstrap.cmd_ensure(state, os.environ.get("MEMHOOKS_BOOTSTRAP_ROOT") or
                                        bootstrap.plugin_root()) and 0
        return 0
    if cmd in ("post-tool-use", "pre-tool-use", "session-start", "session-warm", "lc-cache-write", "ingest"):
        # A file-size limit (a full quota) must surface as an error we handle,
        # not as a signal that kills the hook.
        import _signal  # the C module: `signal` builds enums (~3 ms)

        if hasattr(_signal, "SIGXFSZ"):
            _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
    if cmd == "post-tool-use":
        from memhooks.capture.hooks import post_tool_use

        return post_tool_use()
    if cmd == "pre-tool-use":
        from memhooks.recall.serve import pre_tool_use

        return pre_tool_use()
    if cmd == "session-start":
        from memhooks.capture.hooks import session_start

        return session_start(after_warm=_team_pull)
    if cmd == "session-warm":
        from memhooks.capture.hooks import session_warm

        return session_warm(after_warm=_team_pull)
    if cmd in ("lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write"):
        from memhooks.recall import lc_cache as cache

        return cache.COMMANDS[cmd](args)
    if cmd == "ingest":
        from memhooks.capture.ingester import main as ingest_main
        from memhooks.team.runner import after_ingest  # no-op unless a team store is configured

        return ingest_main(args, after_ingest=after_ingest)
    if cmd == "mcp":
        from memhooks.cli.mcp_server import main as mcp_main

        return mcp_main(args)
    sys.stderr.write(f"memhooks: unknown entry command {cmd!r}\n")
    return 0


def _team_pull(db, project) -> None:
    """After a SessionStart warm: a detached team pull for the project, when a team store is
    configured (the entry point hands this to capture/warm, which never import team/)."""
    from memhooks.team.runner import spawn  # lazy: only after a warm that ran

    spawn("pull", db, project)


def _leave(code) -> None:
    """End a hot path without the interpreter's teardown: every file it wrote is closed and
    its connections too, so what is left is freeing every module and object one by one,
    ~2-4 ms of a ~15 ms run. stdout and stderr are flushed first; a flush that fails
    (a closed pipe) changes nothing, and the exit code stays what it was."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    os._exit(code if isinstance(code, int) else 0)


def _trace_imports(cmd=None):
    """MEMHOOKS_TRACE_IMPORTS=FILE: write the modules this run imported (see memhooks._tracing)."""
    if os.environ.get("MEMHOOKS_TRACE_IMPORTS"):
        from memhooks._tracing import trace_imports

        trace_imports(cmd or (sys.argv[1] if len(sys.argv) > 1 else ""))


def run(argv) -> None:
    """Run one entry command and exit; never a traceback."""
    try:
        code = main(argv)
        _trace_imports()
    except BaseException as exc:  # noqa: BLE001 - entry points never print tracebacks
        code = 0
        if argv[:1] == ["mcp"] and not isinstance(exc, (KeyboardInterrupt, SystemExit)):
            # The MCP server is not a hook: say in one line why it cannot start.
            sys.stderr.write(f"memhooks mcp: {type(exc).__name__}: {exc}\n")
            code = 1
        elif isinstance(exc, SystemExit) and argv[:1] == ["mcp"]:
            code = exc.code if isinstance(exc.code, int) else 1
    if argv[:1] and argv[0] in HOT:
        _leave(code)
    sys.exit(code)
