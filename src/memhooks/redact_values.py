"""Secret redaction, part 1: what counts as a secret value (placeholders, character classes,
randomness, the name of a key), and the replacement callbacks the rules use. Standard
library only (the capture hook imports it); see memhooks.redact for the engine."""

MARK = "[REDACTED]"


# ------------------------------------------------------------------ value checks

_PLACEHOLDER_WORDS = frozenset({
    "password", "passwd", "secret", "token", "string", "str", "none", "null", "nil", "true",
    "false", "undefined", "example", "redacted", "required", "optional", "value", "key",
    "apikey", "api_key", "xxx", "env", "bearer", "basic", "your", "here", "0", "1",
})
_PLACEHOLDER_START = ("<", "{", "$", "%(", "%s", "[", "(", "*", "...", "…", "#{", "@", "&", "`")


def _placeholder(v: str) -> bool:
    lv = v.lower().strip("'\"")
    if not lv or lv in _PLACEHOLDER_WORDS or lv.startswith(_PLACEHOLDER_START):
        return True
    if lv.startswith(("your", "my_", "insert", "replace", "enter", "<", "changeme")) and (
        "_" in lv or "-" in lv or lv.startswith("your")
    ):
        return True
    if len(set(lv)) == 1:  # xxxxxxxx, ********, 00000000
        return True
    if lv.endswith(("_here", "-here", "_goes_here")):
        return True
    return False


def _classes(v: str) -> tuple[bool, bool, bool, bool]:
    digit = upper = lower = other = False
    for ch in v:
        if ch.isdigit():
            digit = True
        elif ch.isupper():
            upper = True
        elif ch.islower():
            lower = True
        else:
            other = True
    return digit, upper, lower, other


def _secretish(v: str, min_len: int = 8) -> bool:
    """Looks like a generated credential: long enough, and not a plain word."""
    if len(v) < min_len or _placeholder(v):
        return False
    digit, upper, _lower, other = _classes(v)
    return digit or other or (upper and any(c.isupper() for c in v[1:]) and any(c.islower() for c in v))


def _random(v: str, min_len: int = 20) -> bool:
    """Mixed digits and letters of both cases: a generated key, not a slug."""
    if len(v) < min_len:
        return False
    digit, upper, lower, _ = _classes(v)
    return digit and upper and lower


def _code_expr(v: str) -> bool:
    """`settings.SECRET_KEY`, `os.environ`, `getToken`, `password` ... : a name, not a value."""
    if "(" in v or v.startswith(("process.env", "os.environ", "env.", "secrets.", "config.",
                                 "settings.", "self.", "this.", "vars.", "import.meta")):
        return True
    parts = v.split(".")
    return len(parts) > 1 and all(p.isidentifier() for p in parts) and not any(c.isdigit() for c in v)


_STRONG_PARTS = ("password", "passwd", "passphrase", "secret", "credential")
_STRONG_WHOLE = frozenset({"token", "apikey", "privatekey", "accountkey", "accesskey", "authtoken",
                           "accesstoken", "refreshtoken", "idtoken", "dsn", "clientsecret",
                           "sharedaccesskey", "sharedaccesssignature", "secretkey", "pat"})
_STRONG_PAIRS = frozenset({
    ("api", "key"), ("access", "key"), ("private", "key"), ("auth", "key"), ("account", "key"),
    ("signing", "key"), ("encryption", "key"), ("master", "key"), ("session", "key"),
    ("secret", "key"), ("shared", "access"), ("client", "secret"), ("app", "key"),
    ("auth", "token"), ("access", "token"), ("refresh", "token"), ("bot", "token"),
})
# Name parts that make a value a secret only when the value looks generated.
_WEAK_PARTS = frozenset({"pass", "pwd", "pw", "key", "sig", "auth", "sas", "cred", "creds",
                         "signature", "keys"})
# A name ending like this names something about a secret, not the secret.
_NOT_SECRET_SUFFIXES = frozenset({
    "type", "url", "uri", "endpoint", "field", "length", "len", "expiry", "expires",
    "expiration", "ttl", "file", "path", "prefix", "name", "names", "header", "param",
    "policy", "mode", "format", "limit", "count", "size", "usage", "id", "ids", "tokens",
    "index", "label", "hint", "min", "max", "rotation", "version", "source", "location",
    "provider", "method", "scheme", "kind", "enabled", "required", "env", "var", "variable",
    "store", "manager", "class", "algorithm", "alg", "strategy", "placeholder", "description",
    "help", "text", "regex", "pattern", "validator", "confirm", "confirmation", "reset",
    "strength", "changed", "tokenizer", "tokenizers", "lifetime", "timeout", "in", "at",
    "generator", "hash", "hashed", "digest", "fingerprint", "ref", "arn", "dir", "folder",
})


def _name_parts(name: str) -> list[str]:
    parts: list[str] = []
    cur = ""
    for ch in name:
        if ch in "_-.":
            if cur:
                parts.append(cur.lower())
            cur = ""
        elif ch.isupper() and cur and not cur[-1].isupper():
            parts.append(cur.lower())
            cur = ch
        else:
            cur += ch
    if cur:
        parts.append(cur.lower())
    return parts


def _name_kind(name: str) -> str | None:
    """"strong", "weak" or None for a key name such as DB_PASSWORD, apiKey or x-api-key."""
    parts = _name_parts(name)
    if not parts or parts[-1] in _NOT_SECRET_SUFFIXES:
        return None
    for i, p in enumerate(parts):
        if p.startswith(_STRONG_PARTS) or p in _STRONG_WHOLE or p.endswith(("password", "secret")):
            return "strong"
        if i and (parts[i - 1], p) in _STRONG_PAIRS:
            return "strong"
    if any(p in _WEAK_PARTS for p in parts):
        return "weak"
    return None


def _value_is_secret(kind: str, value: str) -> bool:
    if _placeholder(value) or _code_expr(value):
        return False
    if kind == "strong":
        if value.replace(".", "").replace("-", "").isdigit() and len(value) < 6:
            return False
        return len(value) >= 3
    return _random(value, 16) or (len(value) >= 16 and _secretish(value))


# ------------------------------------------------------------------ callbacks

def _mk(m, s: str):
    return s if isinstance(m.string, str) else s.encode()


def _text(b) -> str:
    return b if isinstance(b, str) else b.decode("utf-8", "replace")


def _keep1(m):
    """Group 1 is kept, group 2 (the value) is checked and redacted."""
    return m.group(1) + _mk(m, MARK)


def _cb_secretish(m):
    if _secretish(_text(m.group(2))):
        return m.group(1) + _mk(m, MARK)
    return m.group(0)


def _cb_random(m):
    v = _text(m.group(0))
    if _random(v) or v.startswith(("sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-")):
        return _mk(m, MARK)
    return m.group(0)


_TEMPLATE_START = ("$", "{", "<", "%(", "*", "[")


def _cb_url_user(m):
    """scheme://user:password@host: any password but a template (${DB_PASSWORD}, <pw>)."""
    if _text(m.group(2)).startswith(_TEMPLATE_START):
        return m.group(0)
    return _mk(m, "://") + m.group(1) + _mk(m, ":" + MARK + "@")


def _cb_url_token(m):
    v = _text(m.group(1))
    if _random(v, 20) or (len(v) >= 30 and _secretish(v)):
        return _mk(m, "://" + MARK + "@")
    return m.group(0)


def _cb_netrc(m):
    """A .netrc password: any value but a placeholder (`<password>`, `${PASS}`, `xxxx`)."""
    if _placeholder(_text(m.group(2)).strip("\\\"")):
        return m.group(0)
    return m.group(1) + _mk(m, MARK)


def _cb_query(m):
    name, value = _text(m.group(2)).lower(), _text(m.group(3))
    if _placeholder(value):
        return m.group(0)
    if name in ("key", "sig", "code", "auth") and not (_random(value, 8) or len(value) >= 16):
        return m.group(0)
    return m.group(1) + m.group(2) + _mk(m, "=" + MARK)


def _line_start(s, start: int) -> bool:
    """Only indentation (or a YAML list dash) between the last line break and *start*."""
    i = start - 1
    limit = max(0, start - 40)
    nl_b = "\n" if isinstance(s, str) else 10
    while i >= limit:
        c = s[i]
        if c == nl_b or c in ("\r", 13):
            return True
        ch = c if isinstance(c, str) else chr(c)
        if ch == "n" and i > 0 and (s[i - 1] == ("\\" if isinstance(s, str) else 92)):
            return True
        if ch == '"':
            return True  # the start of a (JSON) string
        if ch not in " \t-":
            return False
        i -= 1
    return i < 0


def _line_end(s, end: int) -> bool:
    n = len(s)
    i = end
    while i < n and i < end + 40:
        c = s[i]
        ch = c if isinstance(c, str) else chr(c)
        if ch in "\r\n#\"":
            return True
        if ch == "\\":
            j = i
            while j < n and j < i + 8 and s[j] in ("\\", 92):
                j += 1
            return j < n and s[j] in ("n", "r", 110, 114)
        if ch not in " \t":
            return False
        i += 1
    return i >= n


class _Scan:
    """A rule applied by a scanning loop instead of `sub`: the match stops before the value
    (the value is a lookahead group), so a value left alone is scanned again, as in
    `"t": "SECRET_KEY=x"` where the outer pair is no secret and the inner one is."""

    def __init__(self, decide):
        self.decide = decide

    def run(self, rx, data):
        out = []
        pos = last = 0
        n = len(data)
        while pos <= n:
            m = rx.search(data, pos)
            if m is None:
                break
            repl = self.decide(m)
            if repl is not None:
                out.append(data[last:m.start()])
                out.append(repl)
                last = pos = m.end(5)
            else:
                pos = m.end() if m.end() > m.start() else m.start() + 1
        if not out:
            return data
        out.append(data[last:])
        return data[:0].join(out)


_KINDS: dict = {}


def _kind_of(name) -> str | None:
    got = _KINDS.get(name, 0)
    if got == 0:
        got = _name_kind(_text(name))
        if len(_KINDS) < 4096:
            _KINDS[name] = got
    return got


def _assign(m):
    kind = _kind_of(m.group(1))
    if kind is None or (kind == "weak" and m.end(5) - m.start(5) < 16):
        return None
    name, kq, sep, vq, value = m.group(1, 2, 3, 4, 5)
    quoted = bool(vq)
    tsep = sep.strip()
    if not quoted and not kq and tsep in (":", b":"):
        # YAML-style `password: value` only as a whole line, never in prose
        if not (_line_start(m.string, m.start(1)) and _line_end(m.string, m.end(5))):
            return None
    elif not quoted and tsep in ("=", b"=") and len(sep) > 1 and not _line_start(m.string, m.start(1)):
        return None  # `token = something` in prose or code: only as an ini line
    tname, tvalue = _text(name), _text(value)
    if not _value_is_secret(kind, tvalue):
        return None
    if not quoted and tvalue.isidentifier() and (
        tvalue.lower() in tname.lower() or tname.lower() in tvalue.lower() or kind == "weak"
    ) and not any(c.isdigit() for c in tvalue):
        return None  # password=password, token=access_token: code, not a value
    return m.group(0) + _mk(m, MARK)

