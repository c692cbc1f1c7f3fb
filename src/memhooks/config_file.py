"""The settings file beside the store, `config.toml` (standard library only; a leaf).

One flat TOML table of the keys in SETTINGS. Each key is its environment variable without
the `MEMHOOKS_` prefix, lower-cased (`tier2_ttl_s` is `MEMHOOKS_TIER2_TTL_S`), and the
environment wins over the file (memhooks.config.setting). The hot paths read this file
only when it exists: the flat `key = value` lines memhooks writes are read here with string
operations; anything else in the file (a table, a multi-line value) is handed to the
standard library's `tomllib`, which costs the `re` and `datetime` imports.
"""

import os

from memhooks.files import make_private_dirs, open_regular

# key -> (kind, default as shown, what it does). The environment variable is
# "MEMHOOKS_" + key.upper(). Kinds: size, globs, seconds, number, switch.
SETTINGS = {
    "max_size": ("size", "1GiB", "cap on the store folder's size, enforced by the ingester"),
    "exclude": ("globs", "", "project folders (globs) never captured, served or warmed"),
    "tier1_ttl_s": ("seconds", "86400", "how long a library name -> ID answer stays fresh"),
    "tier1_negative_ttl_s": ("seconds", "21600", "how long a 'no such library' answer stays fresh"),
    "tier1_error_ttl_s": ("seconds", "600", "how long a failed Context7 API search is remembered"),
    "tier2_ttl_s": ("seconds", "14400", "how long captured docs answer a lookup"),
    "serve": ("switch", "on", "answer repeated doc fetches from the cache (PreToolUse)"),
    "serve_context7": ("switch", "on", "serve Context7 resolve and docs calls"),
    "serve_webfetch": ("switch", "on", "serve WebFetch calls"),
    "serve_exa": ("switch", "on", "serve EXA page fetches"),
    "serve_sources": ("switch", "on", "serve the declared docs sources (Ref, Docfork, DeepWiki, GitMCP, yours)"),
    "serve_insist_s": ("seconds", "600", "a call repeated this soon after a served one goes live"),
    "serve_pinned_ttl_s": ("seconds", "2592000", "freshness of docs of the version the lockfile pins"),
    "serve_web_ttl_s": ("seconds", "14400", "freshness of a served web page"),
    "serve_max_chars": ("number", "12000", "longest served answer, in characters"),
    "serve_budget_ms": ("number", "1500", "time a serve decision may take"),
    "offline": ("switch", "off", "never call the Context7 API"),
    "top_n": ("number", "20", "how many of a project's libraries a warm resolves"),
    "warm_budget_s": ("seconds", "2", "time a SessionStart warm may spend on the API"),
    "max_doc_bytes": ("size", "2MiB", "cap for one captured document"),
    "max_write_bytes": ("size", "16MiB", "cap for a body written with lc-cache-write"),
    "add_max_pages": ("number", "200", "pages one `memhooks add`/`refresh` run visits at most"),
    "add_max_page_bytes": ("size", "4MiB", "body bytes read from one page before it is cut off"),
    "add_max_bytes": ("size", "64MiB", "body bytes one `memhooks add`/`refresh` run downloads"),
    "add_budget_s": ("seconds", "300", "wall time of one `memhooks add`/`refresh` run"),
    "add_timeout_s": ("seconds", "20", "time one request of `memhooks add`/`refresh` may take"),
}

MAX_FILE_BYTES = 64 * 1024
_SWITCH_ON = ("1", "true", "yes", "on")
_SWITCH_OFF = ("0", "false", "no", "off")
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3,
          "gb": 1000**3, "t": 1000**4, "tb": 1000**4, "kib": 1024, "mib": 1024**2,
          "gib": 1024**3, "tib": 1024**4}


def env_name(key: str) -> str:
    return "MEMHOOKS_" + key.upper()


def parse_size(text: str) -> int | None:
    """`500MB`, `1GiB`, `2 mib`, `1048576` -> bytes (decimal units are powers of 1000,
    binary ones of 1024); None when it is not a size."""
    s = text.strip().lower().replace("_", "")
    i = 0
    while i < len(s) and (s[i].isdigit() or s[i] == "."):
        i += 1
    number, unit = s[:i], s[i:].strip()
    if not number or unit not in _UNITS or number.count(".") > 1 or number == ".":
        return None
    value = float(number) * _UNITS[unit]
    return int(value) if value < 2**63 else None


# ----------------------------------------------------------------------------- reading

def load(path: str) -> dict:
    """The settings in the file at `path` ({} when it is missing). Raises ValueError for a
    file that is not TOML, or not a regular file of at most MAX_FILE_BYTES."""
    fd = open_regular(path, os.O_RDONLY)
    if fd is None:
        if os.path.lexists(path):
            raise ValueError(f"{path} is not a regular file")
        return {}
    try:
        data = os.read(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path} is over {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8") from exc
    values = loads_flat(text)
    if values is None:
        import tomllib  # brings re and enum onto every hot path that reads settings: only here

        try:
            values = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: {exc}") from exc
    return values


def loads_flat(text: str) -> dict | None:
    """The flat subset of TOML memhooks writes (`key = value` lines, comments, blank lines;
    values: strings, integers, floats, booleans, one-line arrays of those), or None when
    the text has anything else (the caller then asks tomllib)."""
    out: dict = {}
    for line in text.split("\n"):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        key, eq, rest = s.partition("=")
        key = key.strip()
        if not eq or not key or not all(c.isalnum() or c in "_-" for c in key) or not key.isascii():
            return None
        parsed = _value(rest.strip())
        if parsed is None:
            return None
        value, tail = parsed
        tail = tail.strip()
        if (tail and not tail.startswith("#")) or key in out:
            return None
        out[key] = value
    return out


def _value(s: str):
    """(value, rest of the line) or None."""
    if s.startswith('"'):
        return _basic_string(s)
    if s.startswith("'"):
        end = s.find("'", 1)
        return None if end < 0 else (s[1:end], s[end + 1:])
    if s.startswith("["):
        items, rest = [], s[1:].lstrip()
        while not rest.startswith("]"):
            parsed = _value(rest)
            if parsed is None or isinstance(parsed[0], list):
                return None
            items.append(parsed[0])
            rest = parsed[1].lstrip()
            if rest.startswith(","):
                rest = rest[1:].lstrip()
            elif not rest.startswith("]"):
                return None
        return items, rest[1:]
    end = 0
    while end < len(s) and s[end] not in " \t,]#":
        end += 1
    word, rest = s[:end], s[end:]
    if word in ("true", "false"):
        return word == "true", rest
    plain = word.replace("_", "")
    body = plain[1:] if plain[:1] in "+-" else plain
    if body.isdigit() and body.isascii():
        return int(plain), rest
    if body and body.isascii() and all(c.isdigit() or c in ".eE+-" for c in body) and body[0].isdigit():
        try:
            return float(plain), rest
        except ValueError:
            return None
    return None


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def _basic_string(s: str):
    out: list[str] = []
    i = 1
    while i < len(s):
        c = s[i]
        if c == '"':
            return "".join(out), s[i + 1:]
        if c == "\\":
            nxt = s[i + 1:i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            width = {"u": 4, "U": 8}.get(nxt)
            digits = s[i + 2:i + 2 + width] if width else ""
            if not width or len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                return None
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                return None
            out.append(chr(code))
            i += 2 + width
            continue
        if c < " " and c != "\t":
            return None
        out.append(c)
        i += 1
    return None


# ----------------------------------------------------------------------------- writing

def _quote(text: str) -> str:
    out: list[str] = []
    for c in text:
        if c in ('"', "\\"):
            out.append("\\" + c)
        elif c < " " or c == "\x7f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(c, f"\\u{ord(c):04X}"))
        elif 0xD800 <= ord(c) <= 0xDFFF:
            raise ValueError("a lone surrogate cannot be written to TOML")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def dump_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(dump_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {dump_value(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"cannot write a {type(value).__name__} to the settings file")


HEADER = ("# memhooks settings (`memhooks config set KEY VALUE`). Each key is also an environment\n"
          "# variable, MEMHOOKS_<KEY>, which wins over this file.\n")


def _key(key) -> str:
    k = str(key)
    return k if k and k.isascii() and all(c.isalnum() or c in "_-" for c in k) else _quote(k)


def _is_tables(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def dumps(values: dict) -> str:
    """The flat keys, then each array of tables (the docs sources' `[[docs_source]]` rows)
    as it was read."""
    flat = [k for k in sorted(values) if not _is_tables(values[k])]
    out = [HEADER, *(f"{_key(k)} = {dump_value(values[k])}\n" for k in flat)]
    for k in sorted(set(values) - set(flat)):
        for table in values[k]:
            out.append(f"\n[[{_key(k)}]]\n")
            out.extend(f"{_key(field)} = {dump_value(v)}\n" for field, v in table.items())
    return "".join(out)


def save(path: str, values: dict) -> None:
    """Write the file atomically, 0600, in the store's 0700 folder."""
    folder = os.path.dirname(path)
    make_private_dirs(folder)
    data = dumps(values).encode("utf-8")
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    written = False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        written = True
    finally:
        os.close(fd)
        if not written:
            os.unlink(tmp)
    os.replace(tmp, path)


def coerce(key: str, text: str):
    """The value to store for `memhooks config set KEY TEXT`, checked against the key's
    kind. Raises KeyError for an unknown key, ValueError for a bad value."""
    kind = SETTINGS[key][0]
    s = text.strip()
    if kind == "switch":
        low = s.lower()
        if low in _SWITCH_ON:
            return True
        if low in _SWITCH_OFF:
            return False
        raise ValueError(f"{key} is on or off, not {text!r}")
    if kind == "size":
        if parse_size(s) is None:
            raise ValueError(f"{key} is a size such as 500MB or 1GiB, not {text!r}")
        return s
    if kind == "globs":
        parts = [p.strip() for p in s.split(os.pathsep) if p.strip()]
        return [p if p.startswith("~") or os.path.isabs(p) else os.path.abspath(p) for p in parts]
    try:
        number = float(s)
    except ValueError:
        raise ValueError(f"{key} is a number, not {text!r}") from None
    if number != number or number < 0 or number in (float("inf"),):
        raise ValueError(f"{key} is a number >= 0, not {text!r}")
    return int(number) if number.is_integer() else number


_TIME_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str, bare_unit_s: float = 1.0, allow_zero: bool = False) -> float:
    """`90s`, `30m`, `2h`, `1d`, `1w`, `1h30m` -> seconds; a plain number counts in
    `bare_unit_s` (seconds unless the command says otherwise). ValueError when it is not a
    positive duration (zero allowed with `allow_zero`)."""
    s = text.strip().lower().replace(" ", "")
    if not s:
        raise ValueError("empty duration")
    try:
        value = float(s) * bare_unit_s
    except ValueError:
        total, number = 0.0, ""
        for ch in s:
            if ch.isdigit() or ch == ".":
                number += ch
            elif ch in _TIME_UNITS and number:
                total += float(number) * _TIME_UNITS[ch]
                number = ""
            else:
                raise ValueError(f"not a duration: {text!r} (e.g. 30m, 2h, 1d)") from None
        if number:
            raise ValueError(f"not a duration: {text!r} (e.g. 30m, 2h, 1d)") from None
        value = total
    if value < 0 or (value == 0 and not allow_zero) or value != value or value >= 1e15:
        raise ValueError(f"not a duration: {text!r}")
    return value
