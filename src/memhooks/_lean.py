"""The hot paths' `sqlite3`: the C module, loaded without `datetime` and `functools`
(standard library only; a leaf). memhooks._launch calls `lean_sqlite3` before a hot command
runs; a lookup calls it only when it asks the store."""

import sys


def lean_sqlite3():
    """Hot paths get the C module `_sqlite3` under the name `sqlite3`. The `sqlite3` package
    adds only the datetime adapters and converters (deprecated since 3.12; memhooks stores
    epochs and text) and costs `datetime` + `collections.abc`, about 1.5 ms, a tenth of a
    hook run. The C module has all the hot paths use (connect, Connection, Cursor, Row, the
    errors); anything else (dbapi2, Binary, ...) loads the real package on first use."""
    if "sqlite3" in sys.modules:
        return
    try:
        _sqlite3 = _import_sqlite3_c()
    except ImportError:
        return
    lean = type(sys)("sqlite3", _sqlite3.__doc__)
    lean.__dict__.update((k, v) for k, v in vars(_sqlite3).items() if not k.startswith("__"))
    lean.__file__ = getattr(_sqlite3, "__file__", None)

    def __getattr__(name):
        if sys.modules.get("sqlite3") is lean:
            del sys.modules["sqlite3"]
        import importlib

        return getattr(importlib.import_module("sqlite3"), name)

    lean.__getattr__ = __getattr__
    sys.modules["sqlite3"] = lean


def _import_sqlite3_c():
    """`import _sqlite3` without `functools`. The C module's init takes
    `functools.lru_cache` for its statement cache, and `functools` brings `collections`,
    `keyword`, `operator`, `reprlib` and `types`: about 3-4 ms, a third of a lookup. The
    cache needs only what `lru_cache(n)(fn)` returns, and that is the C
    `_functools._lru_cache_wrapper` (cache_info's named tuple aside, which sqlite never
    calls). So a stand-in `functools` with that one function is in place while the module
    initialises, and gone after: any later `import functools` gets the real one."""
    if "functools" in sys.modules or "_sqlite3" in sys.modules:
        import _sqlite3

        return _sqlite3
    try:
        import _functools

        wrapper = _functools._lru_cache_wrapper
    except (ImportError, AttributeError):
        import _sqlite3

        return _sqlite3

    def lru_cache(maxsize=128, typed=False):  # sqlite passes its cached_statements, an int
        return lambda fn: wrapper(fn, max(int(maxsize), 0), bool(typed), tuple)

    stand_in = type(sys)("functools")
    stand_in.lru_cache = lru_cache
    sys.modules["functools"] = stand_in
    try:
        import _sqlite3
    except Exception:  # noqa: BLE001 - a Python whose _sqlite3 wants more of functools
        _sqlite3 = None
    finally:
        if sys.modules.get("functools") is stand_in:
            del sys.modules["functools"]
    if _sqlite3 is None:
        import _sqlite3  # with the real functools

    return _sqlite3
