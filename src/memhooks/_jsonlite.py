"""JSON for the hot paths, in plain Python (no `json` import).

`import json` brings `re` and `enum` with it: on this machine that is about 10 ms, a third of
what SessionStart costs beyond starting the interpreter, for texts of a few hundred bytes
(a hook's stdin, a stored list of lockfiles, one answer string). `loads` and `dumps_str` do
what `json.loads` and `json.dumps(text, ensure_ascii=False)` do, and tests/test_jsonlite.py
holds them to it on a corpus and on random and mutated texts. Code off the hot paths imports
`json` itself.

`loads` is linear in the text: a string is cut at its escapes with `str.find`, never scanned
a character at a time, so a 50 KB tool result costs what its escapes cost. Nesting is read
by recursion: a value nested past about 400 levels raises RecursionError (json's C scanner
goes to about 1,000), which every caller takes as hostile input, as it does json's.
"""


class JSONDecodeError(ValueError):
    """Text that is not JSON (a ValueError, as json.JSONDecodeError is)."""


_WS = " \t\n\r"
_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t"}
_CONSTANTS = (("null", None), ("true", True), ("false", False), ("NaN", float("nan")),
              ("Infinity", float("inf")), ("-Infinity", float("-inf")))


def _fail(what: str, i: int):
    return JSONDecodeError(f"{what}: char {i}")


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _plain(part: str, i: int) -> str:
    """A run of a string literal between escapes: no control characters (json's strict mode)."""
    if part and min(part) < " ":
        raise _fail("Invalid control character", i)
    return part


def _string(s: str, i: int) -> tuple[str, int]:
    """The string literal whose opening quote is just before `i`, and the index after it."""
    chunks = []
    quote = s.find('"', i)
    while True:
        if quote < 0:
            raise _fail("Unterminated string", i)
        slash = s.find("\\", i, quote)
        if slash < 0:
            chunks.append(_plain(s[i:quote], i))
            return "".join(chunks), quote + 1
        chunks.append(_plain(s[i:slash], i))
        kind = s[slash + 1:slash + 2]
        if kind == "u":
            code, i = _hex4(s, slash + 2), slash + 6
            if 0xD800 <= code <= 0xDBFF and s.startswith("\\u", i):
                try:
                    low = _hex4(s, i + 2)
                except JSONDecodeError:
                    low = 0
                if 0xDC00 <= low <= 0xDFFF:  # a surrogate pair: one character
                    code, i = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), i + 6
            chunks.append(chr(code))
        elif kind in _SIMPLE_ESCAPES:
            chunks.append(_SIMPLE_ESCAPES[kind])
            i = slash + 2
        else:
            raise _fail("Invalid \\escape", slash)
        if i > quote:  # the escape took the quote found: find the next one
            quote = s.find('"', i)


def _hex4(s: str, i: int) -> int:
    digits = s[i:i + 4]
    if len(digits) != 4 or not _HEX.issuperset(digits):
        raise _fail("Invalid \\uXXXX escape", i)
    return int(digits, 16)


def _number(s: str, i: int) -> tuple[int | float, int]:
    """JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?"""
    n, start = len(s), i
    if s.startswith("-", i):
        i += 1
    if s.startswith("0", i):
        i += 1
    elif i < n and "1" <= s[i] <= "9":
        while i < n and "0" <= s[i] <= "9":
            i += 1
    else:
        raise _fail("Expecting value", start)
    integer = True
    if s.startswith(".", i) and i + 1 < n and "0" <= s[i + 1] <= "9":
        integer, i = False, i + 2
        while i < n and "0" <= s[i] <= "9":
            i += 1
    if i < n and s[i] in "eE":
        j = i + 1
        if j < n and s[j] in "+-":
            j += 1
        if j < n and "0" <= s[j] <= "9":
            integer, i = False, j + 1
            while i < n and "0" <= s[i] <= "9":
                i += 1
    text = s[start:i]
    return (int(text) if integer else float(text)), i


def _value(s: str, i: int):
    c = s[i:i + 1]
    if c == '"':
        return _string(s, i + 1)
    if c == "{":
        return _object(s, i + 1)
    if c == "[":
        return _array(s, i + 1)
    if c and c in "-0123456789" and not s.startswith("-Infinity", i):
        return _number(s, i)
    for word, value in _CONSTANTS:
        if s.startswith(word, i):
            return value, i + len(word)
    raise _fail("Expecting value", i)


def _object(s: str, i: int) -> tuple[dict, int]:
    obj: dict = {}
    i = _skip(s, i)
    if s.startswith("}", i):
        return obj, i + 1
    while True:
        if not s.startswith('"', i):
            raise _fail("Expecting property name enclosed in double quotes", i)
        key, i = _string(s, i + 1)
        i = _skip(s, i)
        if not s.startswith(":", i):
            raise _fail("Expecting ':' delimiter", i)
        obj[key], i = _value(s, _skip(s, i + 1))
        i = _skip(s, i)
        if s.startswith(",", i):
            i = _skip(s, i + 1)
        elif s.startswith("}", i):
            return obj, i + 1
        else:
            raise _fail("Expecting ',' delimiter", i)


def _array(s: str, i: int) -> tuple[list, int]:
    items: list = []
    i = _skip(s, i)
    if s.startswith("]", i):
        return items, i + 1
    while True:
        value, i = _value(s, i)
        items.append(value)
        i = _skip(s, i)
        if s.startswith(",", i):
            i = _skip(s, i + 1)
        elif s.startswith("]", i):
            return items, i + 1
        else:
            raise _fail("Expecting ',' delimiter", i)


def _encoding(b: bytes) -> str:
    """json.detect_encoding: the BOM, else where the zero bytes of the first four are."""
    if b.startswith((b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00")):
        return "utf-32"
    if b.startswith((b"\xfe\xff", b"\xff\xfe")):
        return "utf-16"
    if b.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if len(b) >= 4:
        if not b[0]:
            return "utf-16-be" if b[1] else "utf-32-be"
        if not b[1]:
            return "utf-16-le" if b[2] or b[3] else "utf-32-le"
    elif len(b) == 2:
        if not b[0]:
            return "utf-16-be"
        if not b[1]:
            return "utf-16-le"
    return "utf-8"


def loads(text):
    """json.loads(text) for a str, bytes or bytearray."""
    if isinstance(text, (bytes, bytearray)):
        data = bytes(text)
        text = data.decode(_encoding(data), "surrogatepass")
    elif not isinstance(text, str):
        raise TypeError(f"the JSON object must be str, bytes or bytearray, not {type(text).__name__}")
    if text.startswith("\ufeff"):
        raise _fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
    value, end = _value(text, _skip(text, 0))
    if _skip(text, end) != len(text):
        raise _fail("Extra data", end)
    return value


# json.dumps(ensure_ascii=False) escapes the quote, the backslash and the C0 controls.
_STRING_ESCAPES = {i: f"\\u{i:04x}" for i in range(0x20)}
_STRING_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\f"): "\\f",
                        ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def dumps_str(text: str) -> str:
    """A JSON string literal, non-ASCII kept: json.dumps(text, ensure_ascii=False)."""
    return '"' + text.translate(_STRING_ESCAPES) + '"'


def dumps(value) -> str:
    """json.dumps(value, ensure_ascii=False) for what `loads` gives (dict keys are strings)."""
    if isinstance(value, str):
        return dumps_str(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if isinstance(value, dict):
        return "{" + ", ".join(dumps_str(str(k)) + ": " + dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def loads_object(raw) -> dict:
    """A JSON object (stored metadata) as a dict; {} for anything else (None, '', bad JSON,
    a list). A dict is returned as it is."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = loads(raw)
    except (TypeError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def loads_strings(raw) -> list[str]:
    """The strings of a JSON list (stored versions); [] for anything else."""
    try:
        value = loads(raw) if raw else []
    except (TypeError, ValueError, RecursionError):
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
