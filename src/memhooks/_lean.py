"""memhooks' one `sqlite3`: the C module `_sqlite3`, loaded without `functools` on the
Pythons CI proves it on (standard library only; a leaf).

Every memhooks module takes SQLite as `from memhooks._lean import sqlite3` (a test holds
that). It is the C module the `sqlite3` package wraps: connect, Connection, Cursor, Row and
every error class are the same objects there (`sqlite3.dbapi2` is `from _sqlite3 import *`
plus the datetime adapters, deprecated since 3.12 and never used here: memhooks stores
epochs and text). Skipping the package saves `datetime` and `collections.abc`.

The C module's init imports `functools` for one call, `lru_cache(n)(fn)`, which builds the
statement cache of each connection, and `functools` brings `collections`, `keyword`,
`operator`, `reprlib` and `types`. Together that is about 7 ms of a hook that should cost
little more than the interpreter: the difference between a lookup at 1.9x and 1.4x
`python -c pass`. So on CPython 3.11 to 3.13, and only while `functools` is not loaded, a
stand-in whose `lru_cache` returns what the real one does (the C
`_functools._lru_cache_wrapper`; only `cache_info`'s named tuple differs, which SQLite never
asks for) sits in `sys.modules` while `_sqlite3` initialises, and is gone after: a later
`import functools` gets the real module. Elsewhere (another Python, `functools` already
loaded, a stand-in refused) `_sqlite3` loads the ordinary way. tests/test_lean.py runs in
CI on each of those Pythons.
"""

import sys

PROVEN = ((3, 11), (3, 12), (3, 13))


def _stand_in():
    """A `functools` with the one function `_sqlite3`'s init takes, or None where the
    stand-in is not proven (another Python, or `functools` is loaded already: free)."""
    if ("functools" in sys.modules or sys.implementation.name != "cpython"
            or sys.version_info[:2] not in PROVEN):
        return None
    try:
        # lazy: the C half of functools, only where the stand-in is used
        from _functools import _lru_cache_wrapper
    except ImportError:
        return None

    def lru_cache(maxsize=128, typed=False):  # _sqlite3 passes the connection's cache size
        return lambda fn: _lru_cache_wrapper(fn, max(int(maxsize), 0), bool(typed), tuple)

    module = type(sys)("functools")
    module.lru_cache = lru_cache
    return module


def _load():
    # lazy: the C module loads inside this function, with the stand-in in place or without
    stand_in = None if "_sqlite3" in sys.modules else _stand_in()
    if stand_in is not None:
        sys.modules["functools"] = stand_in
        try:
            import _sqlite3

            return _sqlite3
        except Exception:  # noqa: BLE001 - an init that wants more of functools: load it plainly below
            pass
        finally:
            if sys.modules.get("functools") is stand_in:
                del sys.modules["functools"]
    import _sqlite3

    return _sqlite3


sqlite3 = _load()
