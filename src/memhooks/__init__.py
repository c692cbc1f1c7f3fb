"""memhooks: keep the library documentation your coding agent looks up.

This package file stays empty on purpose: hot paths (hooks, lc-cache-*) import
submodules directly and must not pay for anything here.
"""

__version__ = "0.1.0"
