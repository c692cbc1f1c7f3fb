"""JSON for the hot paths without importing `json` (standard library C parts only).

`import json` costs `re` and `enum` too: together the largest imports of a hook run.
The C scanner and encoder behind `json` (`_json`) do the same work without them.
"""


class _ScanContext:
    """What the C JSON scanner reads from its context (json.decoder.JSONDecoder's defaults)."""
    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int

    def __init__(self):
        self.memo = {}

    @staticmethod
    def parse_constant(name):
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def loads(text: str):
    """json.loads without importing json (and re, enum): the C scanner, the whole text.
    Anything the scanner refuses goes to json.loads, which raises the usual error."""
    # lazy: `_json` may be missing (a Python built without the C accelerator) and `json`
    # (re, enum) loads only when the C scanner refuses the text.
    try:
        from _json import make_scanner

        start = len(text) - len(text.lstrip(" \t\n\r"))
        # typeshed types the context as `make_scanner` itself; the C scanner only reads
        # the attributes _ScanContext has (as json.decoder.JSONDecoder does).
        value, end = make_scanner(_ScanContext())(text, start)  # type: ignore[arg-type]
        if not text[end:].strip(" \t\n\r"):
            return value
    except Exception:  # noqa: BLE001 - the scanner's errors are not JSONDecodeError
        pass
    import json

    return json.loads(text)


def dumps_str(text: str) -> str:
    """A JSON string literal, non-ASCII kept (json.dumps(text, ensure_ascii=False))."""
    # lazy: as in loads, `json` only where `_json` is missing.
    try:
        from _json import encode_basestring
    except ImportError:  # a python built without the C accelerator
        import json

        return json.dumps(text, ensure_ascii=False)
    return encode_basestring(text)


def loads_object(raw) -> dict:
    """A JSON object (stored metadata) as a dict; {} for anything else (None, '', bad JSON,
    a list). A dict is returned as it is."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = loads(raw)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def loads_strings(raw) -> list[str]:
    """The strings of a JSON list (stored versions); [] for anything else."""
    try:
        value = loads(raw) if raw else []
    except (TypeError, ValueError):
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
