"""Single entry file for hooks and shims: `python [-I -S] .../memhooks/_entry.py CMD [ARGS]`.

It puts the folder holding the `memhooks` package first on sys.path, so a
source checkout (plugin install) and site-packages (pip install) both work
under `-I -S`, where site-packages is not on the path, and hands over to
memhooks._launch. Standard library only, and short: a script is compiled on
every run, an imported module is not.
"""

import os
import sys


def _setup_path():
    here = os.path.dirname(os.path.abspath(__file__))
    parent = os.path.dirname(here)
    # Running a file puts its own folder first; drop it so `memhooks/*.py`
    # never shadows a top-level module.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if parent not in sys.path:
        sys.path.insert(0, parent)


def main(argv):
    """The command's exit code (for callers that import this file: memhooks._console)."""
    # lazy: memhooks imports only once the sys.path fix above has run
    from memhooks._launch import main as launch_main

    return launch_main(argv)


if __name__ == "__main__":
    # Hooks start a fresh interpreter for every tool call: keep the compiled
    # modules even where PYTHONDONTWRITEBYTECODE is set (no-op if unwritable).
    sys.dont_write_bytecode = False
    _setup_path()
    from memhooks._launch import run

    run(sys.argv[1:])
