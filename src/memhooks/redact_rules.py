"""Secret redaction, part 2: the rule table (family, trigger group, triggers, pattern,
replacement) and the coarse trigger groups checked once per payload. Patterns are strings
here; memhooks.redact compiles a rule only when its triggers are present. Standard library
only (the capture hook imports it)."""

from memhooks.redact_values import (
    MARK,
    _assign,
    _cb_netrc,
    _cb_query,
    _cb_random,
    _cb_secretish,
    _cb_url_token,
    _cb_url_user,
    _mk,
    _placeholder,
    _Scan,
    _text,
)

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


# .netrc entries: `machine <host> login <user> [account|port <x>] password <secret>` and
# `default login <user> password <secret>`, tokens apart by spaces, tabs or line breaks (raw
# or JSON-escaped). The login first: "machine … password …" in prose is not an entry.
_NSEP = r"(?:[ \t\r\n]|\\++[nrt])++"  # JSON-escaped once or more: \n, \\n
_NTOK = r"[^\s\\\"',;()<>]{1,256}+"  # a host, a login: no prose punctuation
_NETRC = (
    "((?:" + _tok(["machine"], _NSEP + _NTOK) + "|" + _tok(["default"], "") + ")"
    + _NSEP + "login" + _NSEP + _NTOK
    + "(?:" + _NSEP + "(?:account|port|login)" + _NSEP + _NTOK + "){0,2}+"
    + _NSEP + "password" + _NSEP + r")(\\*+\"[^\"\\\r\n]{1,512}+\\*+\"|'[^'\\\r\n]{1,512}+'|[^\s\\\"']{1,512}+)"
)

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
    ("netrc", "netrc", ((b"machine", b"password"), (b"default", b"password")), _NETRC, _cb_netrc),
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
    "~": (b"~",), "netrc": (b"login",),
}
_MAP_NEEDLES = {"sep": (b"_aaaaaaaaaaaa",), "run": (b"aaaaaaaaaaaaaaaaaaaa",)}
_MAP = bytes(
    ord("a") if (48 <= i <= 57 or 97 <= i <= 122 or 65 <= i <= 90) else ord("_") if i in b"_-.:" else 32
    for i in range(256)
)
