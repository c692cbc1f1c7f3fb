"""The module pip's `lc-cache-*` console scripts import: nothing but the standard library.

pip's wrapper runs `from memhooks._console import lookup` and then `sys.exit(lookup())`.
This module imports nothing at import time beyond `memhooks/__init__` (empty), and each
command takes the same lean start as `python -I -S .../_entry.py CMD` (memhooks._launch),
behind the same boundary (memhooks.entry._boundary: logged once, exit 0, say nothing).
"""

import sys

from memhooks import _launch
from memhooks.entry._boundary import guard


def _run(cmd: str) -> int:
    code = guard(cmd, _launch.main, [cmd, *sys.argv[1:]])
    _launch._trace_imports(cmd)
    _launch._leave(code)  # no interpreter teardown (see _launch._leave)
    return code


def lookup() -> int:
    return _run("lc-cache-lookup")


def lookup_docs() -> int:
    return _run("lc-cache-lookup-docs")


def write() -> int:
    return _run("lc-cache-write")
