"""Making any Python text storable in SQLite (standard library only; used on hot paths).

SQLite's driver encodes every bound str as UTF-8: a lone surrogate (from a JSON
``"\\ud800"`` escape, or a non-UTF-8 path decoded with ``surrogateescape``) raises
UnicodeEncodeError at the insert. NULs are storable but cut text short in many
readers. These helpers return text that always binds.
"""

TYPE_CHECKING = False  # `typing` costs `re` and `enum`: annotations only, never imported here
if TYPE_CHECKING:
    from typing import Any


def str_or_none(value):
    """`value` when it is a string, else None (a payload field that may be missing)."""
    return value if isinstance(value, str) else None


def _has_bad(s: str) -> bool:
    if "\x00" in s:
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def storable(value):
    """`value` with lone surrogates as U+FFFD and NULs as spaces (as in the projections)."""
    if not isinstance(value, str) or not _has_bad(value):
        return value
    out = value.replace("\x00", " ")
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:
        out = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in out)
    return out


def storable_path(value):
    """A path as storable text that keeps distinct paths distinct: bytes that are not
    UTF-8 (``surrogateescape``) become ``\\xNN`` escapes, other surrogates U+FFFD."""
    if isinstance(value, bytes):
        return storable(value.decode("utf-8", "backslashreplace"))
    if not isinstance(value, str) or not _has_bad(value):
        return value
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return storable(value)
    return storable(raw.decode("utf-8", "backslashreplace"))


def storable_tree(value, max_items: int = 5_000_000):
    """A parsed JSON value with every string (keys too) made storable. Iterative, so a
    deeply nested value cannot overflow the stack; returns new containers only where a
    string changed."""
    if isinstance(value, str):
        return storable(value)
    if not isinstance(value, (list, dict)):
        return value
    root: list[object] = [value]
    # (container, index or key): a list index or a dict key, whichever the container takes
    stack: list[tuple[list | dict, Any]] = [(root, 0)]
    seen = 0
    while stack:
        container, key = stack.pop()
        item = container[key]
        seen += 1
        if seen > max_items:
            break
        if isinstance(item, str):
            clean = storable(item)
            if clean is not item:
                container[key] = clean
        elif isinstance(item, list):
            for i in range(len(item)):
                stack.append((item, i))
        elif isinstance(item, dict):
            if any(isinstance(k, str) and _has_bad(k) for k in item):
                item = {storable(k): v for k, v in item.items()}
                container[key] = item
            for k in item:
                stack.append((item, k))
    return root[0]
