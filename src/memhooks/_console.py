"""The module pip's `lc-cache-*` console scripts import: nothing but the standard library.

pip's wrapper runs `from memhooks._console import lookup` and then `sys.exit(lookup())`.
This module imports nothing at import time beyond `memhooks/__init__` (empty), and each
command takes the same lean start as `python -I -S .../_entry.py CMD` (see `_launch.main`):
the C module `_sqlite3` as `sqlite3`, no datetime, no enum, no package-level work.
"""

import sys


def _run(cmd: str) -> int:
    try:
        # lazy: inside the try, so even a failed import exits 0 quietly (the lc-cache-* contract)
        from memhooks import _launch

        code = _launch.main([cmd, *sys.argv[1:]])
        _launch._trace_imports(cmd)
    except BaseException:  # noqa: BLE001 - the lc-cache-* contract: exit 0, say nothing
        return 0
    _launch._leave(code)  # no interpreter teardown (see _launch._leave)
    return code if isinstance(code, int) else 0


def lookup() -> int:
    return _run("lc-cache-lookup")


def lookup_docs() -> int:
    return _run("lc-cache-lookup-docs")


def write() -> int:
    return _run("lc-cache-write")
