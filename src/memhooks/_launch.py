"""What `_entry.py` runs: the hot paths' lean start, then the command (standard library only).

`_entry.py` itself stays a few lines: a script run by path is compiled from source on
every run (only imported modules keep their bytecode), and compiling this module took
~1.5 ms, a tenth of a lookup.
"""

import gc
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
    if cmd in HOT:
        # A hot path lives some tens of ms and ends in os._exit: reference counting frees what
        # it drops, and the cyclic collector would only walk the objects its imports create,
        # several times over (~4 ms of SessionStart's ~38 on this machine).
        gc.disable()
    if sys.version_info < (3, 11):
        # Too old for memhooks: SessionStart in plugin mode hands over to a 3.11+ python it
        # finds (python3.1x on PATH, the plugin's venv), or says once that there is none.
        state = os.environ.get("MEMHOOKS_BOOTSTRAP_STATE", "")
        if cmd == "session-start" and state:
            # lazy: each entry command imports only its own modules (hot paths under -I -S)
            from memhooks import bootstrap

            return _handover(bootstrap, state, os.environ.get("MEMHOOKS_BOOTSTRAP_ROOT") or
                             bootstrap.plugin_root(), argv)
        return 0
    if cmd in ("post-tool-use", "pre-tool-use", "session-start", "session-warm", "lc-cache-write", "ingest"):
        # A file-size limit (a full quota) must surface as an error we handle,
        # not as a signal that kills the hook.
        import _signal  # the C module: `signal` builds enums (~3 ms)

        if hasattr(_signal, "SIGXFSZ"):
            _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
    if cmd == "post-tool-use":
        from memhooks.entry.post_tool_use import main as post_main

        return post_main(args)
    elif cmd == "pre-tool-use":
        from memhooks.entry.pre_tool_use import main as pre_main

        return pre_main(args)
    elif cmd in ("session-start", "session-warm"):  # the hook, and its slow half
        from memhooks.entry import session_start

        run_it = session_start.main if cmd == "session-start" else session_start.warm_main
        return run_it(args, after_warm=_team_pull)
    elif cmd in ("lc-cache-lookup", "lc-cache-lookup-docs", "lc-cache-write"):
        from memhooks.entry.lc_cache import main as cache_main

        return cache_main(cmd, args)
    elif cmd == "ingest":
        from memhooks.entry.ingester import main as ingest_main

        return ingest_main(args)
    elif cmd == "mcp":
        from memhooks.entry.mcp import main as mcp_main

        return mcp_main(args)
    sys.stderr.write(f"memhooks: unknown entry command {cmd!r}\n")
    return 0


def _handover(bootstrap, state, root, argv):
    """SessionStart run by a python3 too old for memhooks (plugin mode): run the hook under the
    3.11+ interpreter bootstrap.resolve() finds (exec: stdin and the one JSON answer are that
    process's; the marker it wrote makes the other hooks use it too), else print the notice
    object (no usable Python). Returns an exit status only when it did not hand over."""
    hot = None
    if not os.environ.get("MEMHOOKS_HANDED_OVER"):
        try:
            hot = bootstrap.resolve(state, root)[0]
        except Exception as exc:  # noqa: BLE001 - an old python3 has no entry/ boundary to fall back on
            bootstrap._log("resolve failed: %s" % exc)
    if hot and bootstrap._is_exe(hot):
        os.environ["MEMHOOKS_HANDED_OVER"] = "1"
        entry = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_entry.py")
        try:
            sys.stdout.flush()
            os.execv(hot, [hot, "-I", "-S", entry] + list(argv))
        except OSError as exc:
            bootstrap._log("cannot hand over to %s: %s" % (hot, exc))
    return bootstrap.cmd_ensure(state, root) and 0


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
        except (OSError, ValueError):  # a closed pipe or file
            pass
    os._exit(code if isinstance(code, int) else 0)


def _trace_imports(cmd=None):
    """MEMHOOKS_TRACE_IMPORTS=FILE: write the modules this run imported (see memhooks._tracing)."""
    if os.environ.get("MEMHOOKS_TRACE_IMPORTS"):
        # lazy: only when MEMHOOKS_TRACE_IMPORTS is set
        from memhooks._tracing import trace_imports

        trace_imports(cmd or (sys.argv[1] if len(sys.argv) > 1 else ""))


def _mcp(argv) -> int:
    """The MCP server is not a hook: when it cannot start (or stops on an error), it says why
    in one line on stderr and exits 1."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # noqa: BLE001 - the server's one line: whatever stopped it
        sys.stderr.write(f"memhooks mcp: {type(exc).__name__}: {exc}\n")
        return 1


def run(argv) -> None:
    """Run one entry command and exit. Each command runs behind memhooks.entry._boundary
    (logged once, exit 0); the MCP server keeps its one line on stderr and exit 1."""
    if argv[:1] == ["mcp"]:
        code = _mcp(argv)
    else:
        from memhooks.entry._boundary import guard

        code = guard(argv[0] if argv else "entry", main, argv)
    _trace_imports()
    if argv[:1] and argv[0] in HOT:
        _leave(code)
    sys.exit(code)
