"""Secret redaction (standard library only; runs in the capture hook on every tool call).

One rule table serves raw hook bytes (before journaling) and decoded text (before the
projections), so both redact alike, including text that is still JSON-escaped (`\\n`,
`\\"`): a token may start right after an escape, and no value runs across a backslash.
Replacements never contain `"` or `\\`, so redacting raw JSON keeps it valid.

The rules aim at credentials, not at digests or code: sha1/sha256 hashes, UUIDs, git SHAs,
`sha512-` integrity strings, base64 in code, "Bearer authentication", "the password
field", slugs like `/sk-learn-pipelines-…` and placeholders (`<token>`, `${DB_PASSWORD}`,
`YOUR_API_KEY`) come through unchanged.

Cost: a payload is lower-cased and mapped once (C speed); `re` is imported and a rule is
compiled only when that rule's trigger substrings are present, and each rule then runs in
linear time: every pattern starts with a literal (so the engine skips to it), repetition is
possessive or bounded, and a token cannot start inside a run of its own characters.
"""

from __future__ import annotations

MARK = "[REDACTED]"
_MARK_B = MARK.encode()

# ------------------------------------------------------------------ building blocks

_W = "A-Za-z0-9_"  # word characters: a token never starts right after one ...
_ESC = r"\\[nrtbf\"/]"  # ... unless that is the letter of a JSON escape such as \n


def _esc(s: str) -> str:
    out = []
    for ch in s:
        out.append("\\" + ch if ch in ".^$*+?{}[]()|\\/-~" else ch)
    return "".join(out)


def _tok(prefixes, body: str, *, word: str = _W) -> str:
    """Literal prefix (any of *prefixes*), then *body*. The boundary check sits after the
    literal so the regex engine can still jump straight to the literal."""
    alts = []
    for p in prefixes:
        e = _esc(p)
        alts.append(f"{e}(?:(?<![{word}]{e})|(?<={_ESC}{e}))")
    return "(?:" + "|".join(alts) + ")" + body


# A value as it appears after `=`/`:`: it stops at whitespace, quotes, a backslash (the start
# of a JSON escape), and punctuation that ends a value in code or a URL.
_VAL = r"[^\s\"'\\`<>&,;)\]}|]"
_QVAL = r"[^\"'\\\r\n]"  # inside quotes: spaces allowed


def _ci(word: str) -> str:
    """Case-insensitive literal as character classes (keeps the engine's first-char skip)."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else _esc(c) for c in word)


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


# ------------------------------------------------------------------ the rules
# (family, trigger group, fine triggers (lower-case; any present), pattern, replacement)
# Trigger groups are cheap coarse checks made once per payload; see _active_groups.

_HEX = "0-9a-fA-F"
_B64URL = "A-Za-z0-9_-"

RULES = (
    ("private-key", "pem", ("private key",),
     r"(-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----)"
     r"(?:[A-Za-z0-9+/=\s:,.]|\\++[nrt]|-(?!----))*+"
     r"(-----END (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----)?",
     r"\1" + MARK + r"\2"),
    ("jwt", "jwt", (".eyj",),
     _tok(["eyJ"], r"[A-Za-z0-9_-]{5,}+\.eyJ[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]*+",
          word="A-Za-z0-9_-"), MARK),
    ("url-password", "://", ((b"://", b"@"),),
     r"://([^\s:/?#@\"'\\<>`]{0,128}+):([^\s/?#\"'\\<>`]{1,256})@", _cb_url_user),
    ("url-token", "://", ((b"://", b"@"),),
     r"://([A-Za-z0-9_-]{20,256}+)@", _cb_url_token),
    ("authorization", "auth", ("authorization",),
     "(" + _ci("authorization") + r"\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
     r"(?:[A-Za-z][A-Za-z-]{1,12}[ \t]+)?)([^\s\"'\\,;]{4,}+)", _cb_secretish),
    ("bearer", "bearer", ("bearer",),
     "(" + _ci("bearer") + r"[ \t]+)([A-Za-z0-9_.~+/=-]{8,}+)", _cb_secretish),
    ("basic-auth", "basic", ("basic",),
     "(" + _ci("basic") + r"[ \t]+)([A-Za-z0-9+/]{8,}+={0,2})", _cb_secretish),
    ("api-key-header", "assign", ("api-key", "apikey", "auth-token", "access-token",
                                "private-token", "vault-token", "subscription-key",
                                "functions-key"),
     r"((?:[Aa][Pp][Ii]-?[Kk][Ee][Yy]|[Aa]uth-[Tt]oken|[Aa]ccess-[Tt]oken|"
     r"[Pp]rivate-[Tt]oken|[Vv]ault-[Tt]oken|[Gg]oog-[Aa]pi-[Kk]ey|[Ff]unctions-[Kk]ey|"
     r"[Oo]cp-[Aa]pim-[Ss]ubscription-[Kk]ey)"
     r"\\?[\"']?[ \t]*:[ \t]*\\?[\"']?)([^\s\"'\\,;]{6,}+)", _cb_secretish),
    ("curl-user", "curl", (b"-u",),
     r"((?:-u|--user)(?:[ \t]+|=)\\?[\"']?[^\s:\"'\\]{1,128}+:)([^\s\"'\\]{3,256}+)",
     lambda m: m.group(0) if _text(m.group(2)).isdigit() or _placeholder(_text(m.group(2)))
     else m.group(1) + _mk(m, MARK)),
    ("url-query", "assign", (b"key=", b"token=", b"secret=", b"sig=", b"signature=", b"password=",
                        b"passwd=", b"pwd=", b"auth=", b"code=", b"credential="),
     r"([?&;])([Aa]pi[_-]?[Kk]ey|[Aa]pikey|[Aa]ccess[_-]?[Tt]oken|[Aa]uth[_-]?[Tt]oken|"
     r"[Rr]efresh[_-]?[Tt]oken|[Ii]d[_-]?[Tt]oken|[Tt]oken|[Kk]ey|[Ss]ecret|"
     r"[Cc]lient[_-]?[Ss]ecret|[Pp]assword|[Pp]asswd|[Pp]wd|[Ss]ig|[Ss]ignature|"
     r"X-Amz-(?:Signature|Credential|Security-Token)|X-Goog-(?:Signature|Credential)|"
     r"x-amz-(?:signature|credential|security-token)|[Aa]uth|[Cc]ode)"
     r"=([^&#\s\"'\\<>`]{1,2048}+)", _cb_query),
    # name = value, "name": "value", name: value (env, ini, toml, JSON, YAML, kwargs, headers)
    ("assignment", "assign", ("pass", "pw", "secret", "token", "key", "cred", "auth", "sig",
                              "dsn", "sas"),
     r"(?:(?<![A-Za-z0-9_.\\-])|(?<=\\[nrt]))([A-Za-z_][A-Za-z0-9_.-]{0,80}+)(\\*+[\"']?)"
     r"([ \t]{0,8}+(?:=>|:(?=[ \t\"'\\])|=)[ \t]{0,8}+)(\\*+[\"']|)"
     r"(?=((?:(?<=[\"'])" + _QVAL + r"{1,300}+)|" + _VAL + r"{1,300}+))",
     _Scan(_assign)),
    # provider tokens with a distinctive prefix (gitleaks' default families and a few more)
    ("context7", "run", ("ctx7sk",), _tok(["ctx7sk"], r"[A-Za-z0-9_-]{6,}+"), MARK),
    ("openai-anthropic", "sep", ("sk-",), _tok(["sk-"], r"[A-Za-z0-9_-]{20,}+",
                                             word="A-Za-z0-9_-"), _cb_random),
    ("stripe", "sep", ("sk_", "rk_", "whsec_"),
     _tok(["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"],
          r"[A-Za-z0-9]{10,}+") + "|" + _tok(["whsec_"], r"[A-Za-z0-9+/=]{20,}+"), MARK),
    ("github", "sep", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     _tok(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], r"[A-Za-z0-9]{30,}+") + "|"
     + _tok(["github_pat_"], r"[A-Za-z0-9_]{30,}+"), MARK),
    ("gitlab", "sep", ("gl", "gr1348941", "_gitlab_session"),
     _tok(["glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glffct-", "glft-", "glimt-",
           "glagent-", "gloas-", "glsoat-", "GR1348941"], r"[A-Za-z0-9_.-]{20,}+")
     + "|" + _tok(["_gitlab_session="], r"[A-Za-z0-9]{20,}+"), MARK),
    ("slack", "sep", ("xox", "xapp-"),
     _tok(["xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.", "xapp-"],
          r"[A-Za-z0-9.-]{10,}+"), MARK),
    ("slack-webhook", "://", ("hooks.slack.com",),
     r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9+/_-]{20,}+", r"\1" + MARK),
    ("discord-webhook", "://", ("discord",),
     r"(discord(?:app)?\.com/api/webhooks/[0-9]{5,30}+/)[A-Za-z0-9_-]{20,}+", r"\1" + MARK),
    ("teams-webhook", "://", ("webhook.office.com",),
     r"(webhook\.office\.com/webhookb2/)[A-Za-z0-9@/_-]{20,}+", r"\1" + MARK),
    ("google", ("run", "sep", "_"), ("aiza", "gocspx-", "ya29.", "1//0"),
     _tok(["AIza"], r"[A-Za-z0-9_-]{30,}+") + "|" + _tok(["GOCSPX-"], r"[A-Za-z0-9_-]{20,}+")
     + "|" + _tok(["ya29."], r"[A-Za-z0-9_-]{20,}+") + "|" + _tok(["1//0"], r"[A-Za-z0-9_-]{30,}+"),
     MARK),
    ("aws-access-key-id", "run", ("akia", "asia", "abia", "acca", "a3t"),
     _tok(["AKIA", "ASIA", "ABIA", "ACCA", "A3T"], r"[A-Z0-9]{16,17}(?![A-Za-z0-9])"), MARK),
    ("twilio", "run", ("sk",), _tok(["SK"], r"[0-9a-fA-F]{32}(?![A-Za-z0-9])"), MARK),
    ("sendgrid", "sep", ("sg.",), _tok(["SG."], r"[A-Za-z0-9_-]{16,32}+\.[A-Za-z0-9_-]{16,64}+"),
     MARK),
    ("npm", "sep", ("npm_",), _tok(["npm_"], r"[A-Za-z0-9]{30,}+"), MARK),
    ("huggingface", "sep", ("hf_", "api_org_"), _tok(["hf_", "api_org_"], r"[A-Za-z0-9]{30,}+"),
     MARK),
    ("pypi", "sep", ("pypi-",), _tok(["pypi-AgEIcHlwaS5vcmc"], r"[A-Za-z0-9_-]{30,}+"), MARK),
    ("rubygems", "sep", ("rubygems_",), _tok(["rubygems_"], r"[a-f0-9]{40,}+"), MARK),
    ("shopify", "sep", ("shpat_", "shpca_", "shppa_", "shpss_"),
     _tok(["shpat_", "shpca_", "shppa_", "shpss_"], r"[a-fA-F0-9]{32,}+"), MARK),
    ("digitalocean", "sep", ("_v1_",), _tok(["dop_v1_", "doo_v1_", "dor_v1_"], r"[a-f0-9]{64,}+"),
     MARK),
    ("databricks", "run", ("dapi",), _tok(["dapi"], r"[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])"),
     MARK),
    ("doppler-dynatrace-vault", "sep", ("dp.pt.", "dt0c01.", "hvs.", "hvb."),
     _tok(["dp.pt.", "dt0c01.", "hvs.", "hvb."], r"[A-Za-z0-9._-]{24,}+"), MARK),
    ("terraform", "sep", (".atlasv1.",), r"(\.atlasv1\.)[A-Za-z0-9_=-]{40,}+", r"\1" + MARK),
    ("linear-sentry-grafana", "sep", ("lin_api_", "sntrys_", "sntryu_", "glc_", "glsa_", "pnu_",
                                    "rdme_", "sgp_", "tfp_", "fo1_", "ntn_", "sm_", "ops_"),
     _tok(["lin_api_", "sntrys_", "sntryu_", "glc_", "glsa_", "pnu_", "rdme_", "sgp_", "tfp_",
           "fo1_", "ntn_", "sm_aat_", "sm_pat_", "sm_sat_", "ops_eyJ"], r"[A-Za-z0-9+/=_-]{20,}+"),
     MARK),
    ("newrelic-postman-others", "sep", ("nrak-", "nrjs-", "nrii-", "pmak-", "pul-", "pplx-",
                                      "xkeysib-", "hrku-", "fio-u-", "flwseck", "ico-",
                                      "sq0atp-", "sq0csp-", "atatt", "age-secret-key-1", "key-",
                                      "v1.0-"),
     _tok(["NRAK-", "NRJS-", "NRII-", "PMAK-", "pul-", "pplx-", "xkeysib-", "HRKU-", "fio-u-",
           "FLWSECK-", "FLWSECK_TEST-", "ico-", "sq0atp-", "sq0csp-", "ATATT", "AGE-SECRET-KEY-1",
           "v1.0-"], r"[A-Za-z0-9_=-]{20,}+", word="A-Za-z0-9_-")
     + "|" + _tok(["key-"], r"[a-f0-9]{32}(?![A-Za-z0-9])"), MARK),
    ("planetscale-duffel-shippo", "sep", ("pscale_", "duffel_", "shippo_", "clojars_"),
     _tok(["pscale_tkn_", "pscale_oauth_", "pscale_pw_", "duffel_test_", "duffel_live_",
           "shippo_live_", "shippo_test_", "CLOJARS_"], r"[A-Za-z0-9=._-]{20,}+"), MARK),
    ("alibaba-artifactory-easypost", "run", ("ltai", "akcp", "ezak", "eztk", "eaam", "eaac"),
     _tok(["LTAI", "AKCp", "EZAK", "EZTK", "EAAM", "EAAC"], r"[A-Za-z0-9]{20,}+"), MARK),
    ("notion-secret", "sep", ("secret_",), _tok(["secret_"], r"[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
     MARK),
    ("openshift", "~", ("sha256~",), _tok(["sha256~"], r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
     MARK),
    ("telegram-bot", "sep", (":aa",), r":AA(?<=[0-9]:AA)[A-Za-z0-9_-]{30,}+", ":" + MARK),
    ("azure-ad-client-secret", "~", ("q~",),
     r"Q~(?<=[A-Za-z0-9_~.]{3}[0-9]Q~)[A-Za-z0-9_~.-]{31,34}+", "Q~" + MARK),
)

# Coarse groups: one cheap check each, made on the lower-cased payload, or on its map where
# letters and digits are all "a" and separators ("_", "-", ".", ":") are all "_". Long needles
# are cheap to look for; a clean payload costs a dozen searches and no `re`.
_GROUP_NEEDLES = {
    "pem": (b"private key",), "jwt": (b".eyj",), "://": (b"://",), "auth": (b"authorization",),
    "bearer": (b"bearer",), "basic": (b"basic ",), "curl": (b"curl",),
    "assign": (b"key", b"pass", b"secret", b"token", b"auth", b"cred", b"sig", b"dsn"),
    "~": (b"~",),
}
_MAP_NEEDLES = {"sep": (b"_aaaaaaaaaaaa",), "run": (b"aaaaaaaaaaaaaaaaaaaa",)}
_MAP = bytes(
    ord("a") if (48 <= i <= 57 or 97 <= i <= 122 or 65 <= i <= 90) else ord("_") if i in b"_-.:" else 32
    for i in range(256)
)

_compiled: dict = {}


def _rule(index: int, kind: type):
    key = (index, kind)
    got = _compiled.get(key)
    if got is None:
        import re

        _family, _group, _triggers, pattern, repl = RULES[index]
        rx = re.compile(pattern.encode() if kind is bytes else pattern)
        if isinstance(repl, str) and kind is bytes:
            repl = repl.encode()
        got = _compiled[key] = (rx, repl)
    return got


def _needed(low: bytes) -> list[int]:
    """Indexes of the rules whose triggers are in *low* (the lower-cased payload)."""
    seen: dict = {}

    def has(needle) -> bool:
        got = seen.get(needle)
        if got is None:
            got = seen[needle] = needle in low
        return got

    groups = {g for g, needles in _GROUP_NEEDLES.items() if any(has(n) for n in needles)}
    mapped = low.translate(_MAP)
    groups.update(g for g, needles in _MAP_NEEDLES.items() if any(n in mapped for n in needles))
    if not groups:
        return []
    out = []
    for i, (_family, group, triggers, _p, _r) in enumerate(RULES):
        if (group in groups if isinstance(group, str) else not groups.isdisjoint(group)) and any(
            all(has(x) for x in t) if isinstance(t, tuple) else has(_B(t)) for t in triggers
        ):
            out.append(i)
    return out


def _B(t) -> bytes:
    return t if isinstance(t, bytes) else t.encode()


def _sub(rx, repl, data):
    return repl.run(rx, data) if isinstance(repl, _Scan) else rx.sub(repl, data)


def _apply(data, kind: type, low: bytes):
    for i in _needed(low):
        rx, repl = _rule(i, kind)
        data = _sub(rx, repl, data)
    return data


def redact_bytes(raw: bytes) -> bytes:
    """Redact raw bytes (a hook's JSON payload) as :func:`redact_text` redacts text."""
    if not raw:
        return raw
    return _apply(raw, bytes, raw.lower())


def redact_text(text: str) -> str:
    if not text:
        return text
    return _apply(text, str, text.encode("utf-8", "surrogatepass").lower())


def families_found(text: str) -> list[str]:
    """Names of the rule families that change *text* (for tests and reports)."""
    low = text.encode("utf-8", "surrogatepass").lower()
    out = []
    for i in _needed(low):
        rx, repl = _rule(i, str)
        if _sub(rx, repl, text) != text:
            out.append(RULES[i][0])
    return out
