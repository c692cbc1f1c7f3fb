"""MEMHOOKS_TRACE_IMPORTS=FILE: each hot-path run appends one line, its label and the modules
it imported, so the tests can check that the hot paths stay on the standard library, under
the shims exactly as installed. Standard library only; a leaf module."""

import os
import sys


def trace_imports(label: str) -> None:
    target = os.environ.get("MEMHOOKS_TRACE_IMPORTS", "")
    if not target:
        return
    try:
        with open(target, "a") as fh:
            fh.write(" ".join([label] + sorted(sys.modules)) + "\n")
    except OSError:
        pass
