"""The one never-raise boundary of memhooks' processes, and the one hook-output writer
(standard library only: every hot path imports this module).

`guard(name, fn, *args)` runs a process's work: whatever it raises is logged once to
memhooks.log and the process exits 0 (a hook never breaks the session). Outside input that
the interpreter cannot take (nesting past the recursion limit, memory, bad bytes) is logged
as one line with its cause; anything else is memhooks' own bug and keeps its traceback.
`emit(text)` writes the one JSON object a hook answers with; a closed pipe changes nothing.
"""

import sys

# What hostile outside input raises on its own: a 100,000-deep JSON value (RecursionError),
# a payload too large for memory, bytes that are not UTF-8. Logged as one line, no traceback.
HOSTILE = (RecursionError, MemoryError, UnicodeError)


def cause(exc: BaseException) -> str:
    """One line saying why: the exception's kind and its message, cut short."""
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def report(name: str, exc: BaseException) -> None:
    """Log what ended a process, once: one line for hostile input or an interruption, the
    (redacted) traceback for anything else. Call it inside the `except` block. Never raises."""
    if isinstance(exc, HOSTILE):
        _log(f"{name}: input refused: {cause(exc)}")
    elif isinstance(exc, (KeyboardInterrupt, SystemExit)):
        _log(f"{name}: stopped ({cause(exc)})")
    else:
        _log(name, traceback=True)


def _log(text: str, traceback: bool = False) -> None:
    """One line to memhooks.log (with the traceback being handled, for `traceback`). The log
    and its redaction load only when there is something to say."""
    from memhooks import log

    (log.log_exception if traceback else log.log_error)(text)


def guard(name: str, fn, *args) -> int:
    """Run `fn(*args)` and return its exit code; on anything it raises, log once and return 0."""
    try:
        code = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the one boundary: a process never breaks the session
        try:
            report(name, exc)
        except BaseException:  # noqa: BLE001 - a log that cannot be written: nothing left to tell
            pass
        return 0
    return code if isinstance(code, int) else 0


def emit(text) -> None:
    """Write one JSON object (a line) to stdout, whatever the locale; nothing for None. A
    closed or broken stdout changes nothing: the hook's exit code stays 0."""
    if not text:
        return
    data = text.encode("utf-8", "replace")
    try:
        sys.stdout.buffer.write(data if data.endswith(b"\n") else data + b"\n")
        sys.stdout.buffer.flush()
    except (OSError, ValueError):  # a closed pipe, a closed file: the answer is simply not given
        pass


def refuse(name: str, why: str) -> None:
    """Log one line for outside input a process will not take (too large, not UTF-8, ...)."""
    _log(f"{name}: input refused: {why}")
