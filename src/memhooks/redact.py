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

This module is the engine (trigger prefilter, lazy compile, apply) and holds the prefilter's
tables: the coarse trigger groups and, for each rule, its (group, triggers), copied from
the rule table (tests/test_redaction.py keeps the copy equal to it). So a payload that holds
no rule's triggers loads nothing more; the rule table itself (``memhooks.redact_rules``) and
the value checks and replacement callbacks (``memhooks.redact_values``) load only for a
payload that holds one.
"""

__all__ = ["families_found", "redact_bytes", "redact_text"]  # and RULES, MARK (module __getattr__)

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

# (trigger group, fine triggers) of memhooks.redact_rules.RULES[i], in its order: a rule
# applies when its group is active and one of its triggers (lower-case; a tuple: all of its
# parts) is in the payload.
_TRIGGERS = (
    ("pem", ("private key",)),  # private-key
    ("jwt", (".eyj",)),  # jwt
    ("://", ((b"://", b"@"),)),  # url-password
    ("://", ((b"://", b"@"),)),  # url-token
    ("auth", ("authorization",)),  # authorization
    ("bearer", ("bearer",)),  # bearer
    ("basic", ("basic",)),  # basic-auth
    ("assign", ("api-key", "apikey", "auth-token", "access-token", "private-token", "vault-token",
         "subscription-key", "functions-key")),  # api-key-header
    ("netrc", ((b"machine", b"password"), (b"default", b"password"))),  # netrc
    ("curl", (b"-u",)),  # curl-user
    ("assign", (b"key=", b"token=", b"secret=", b"sig=", b"signature=", b"password=", b"passwd=",
         b"pwd=", b"auth=", b"code=", b"credential=")),  # url-query
    ("assign", ("pass", "pw", "secret", "token", "key", "cred", "auth", "sig", "dsn", "sas")),  # assignment
    ("run", ("ctx7sk",)),  # context7
    ("sep", ("sk-",)),  # openai-anthropic
    ("sep", ("sk_", "rk_", "whsec_")),  # stripe
    ("sep", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),  # github
    ("sep", ("gl", "gr1348941", "_gitlab_session")),  # gitlab
    ("sep", ("xox", "xapp-")),  # slack
    ("://", ("hooks.slack.com",)),  # slack-webhook
    ("://", ("discord",)),  # discord-webhook
    ("://", ("webhook.office.com",)),  # teams-webhook
    (("run", "sep", "_"), ("aiza", "gocspx-", "ya29.", "1//0")),  # google
    ("run", ("akia", "asia", "abia", "acca", "a3t")),  # aws-access-key-id
    ("run", ("sk",)),  # twilio
    ("sep", ("sg.",)),  # sendgrid
    ("sep", ("npm_",)),  # npm
    ("sep", ("hf_", "api_org_")),  # huggingface
    ("sep", ("pypi-",)),  # pypi
    ("sep", ("rubygems_",)),  # rubygems
    ("sep", ("shpat_", "shpca_", "shppa_", "shpss_")),  # shopify
    ("sep", ("_v1_",)),  # digitalocean
    ("run", ("dapi",)),  # databricks
    ("sep", ("dp.pt.", "dt0c01.", "hvs.", "hvb.")),  # doppler-dynatrace-vault
    ("sep", (".atlasv1.",)),  # terraform
    ("sep", ("lin_api_", "sntrys_", "sntryu_", "glc_", "glsa_", "pnu_", "rdme_", "sgp_", "tfp_",
         "fo1_", "ntn_", "sm_", "ops_")),  # linear-sentry-grafana
    ("sep", ("nrak-", "nrjs-", "nrii-", "pmak-", "pul-", "pplx-", "xkeysib-", "hrku-", "fio-u-",
         "flwseck", "ico-", "sq0atp-", "sq0csp-", "atatt", "age-secret-key-1", "key-", "v1.0-")),  # newrelic-postman-others
    ("sep", ("pscale_", "duffel_", "shippo_", "clojars_")),  # planetscale-duffel-shippo
    ("run", ("ltai", "akcp", "ezak", "eztk", "eaam", "eaac")),  # alibaba-artifactory-easypost
    ("sep", ("secret_",)),  # notion-secret
    ("~", ("sha256~",)),  # openshift
    ("sep", (":aa",)),  # telegram-bot
    ("~", ("q~",)),  # azure-ad-client-secret
)

_compiled: dict = {}


def __getattr__(name: str):
    """RULES and MARK, loaded when asked for (the capture hook of a clean payload never is)."""
    if name == "RULES":
        # lazy: the rule table only for a payload that holds a rule's triggers
        from memhooks.redact_rules import RULES

        return RULES
    if name == "MARK":
        # lazy: as RULES
        from memhooks.redact_values import MARK

        return MARK
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rule(index: int, kind: type):
    key = (index, kind)
    got = _compiled.get(key)
    if got is None:
        # lazy: `re` and the rule table only when a rule's trigger is present (capture hook,
        # every tool call)
        import re

        from memhooks.redact_rules import RULES

        _family, _group, _triggers, pattern, repl = RULES[index]
        rx = re.compile(pattern.encode() if kind is bytes else pattern)
        got = _compiled[key] = (rx, repl.encode() if isinstance(repl, str) and kind is bytes else repl)
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
    for i, (group, triggers) in enumerate(_TRIGGERS):
        if (group in groups if isinstance(group, str) else not groups.isdisjoint(group)) and any(
            all(has(x) for x in t) if isinstance(t, tuple) else has(_B(t)) for t in triggers
        ):
            out.append(i)
    return out


def _B(t) -> bytes:
    return t if isinstance(t, bytes) else t.encode()


def _sub(rx, repl, data):
    # lazy: the callbacks' module only once a rule applies (then already loaded by the rules)
    from memhooks.redact_values import _Scan

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
    # lazy: the rule table's names only for this report
    from memhooks.redact_rules import RULES

    low = text.encode("utf-8", "surrogatepass").lower()
    out = []
    for i in _needed(low):
        rx, repl = _rule(i, str)
        if _sub(rx, repl, text) != text:
            out.append(RULES[i][0])
    return out
