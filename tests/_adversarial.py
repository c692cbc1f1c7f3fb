"""Worst-case inputs for the regular expressions that run on captured text.

Each generator returns a str of about `size` characters built to make a backtracking
engine work hard on one rule: its trigger repeated, its trigger followed by a huge run of
the characters it accepts, near misses that fail at the last character, and so on.
"""

from __future__ import annotations

FILLERS = ("a", "aB1", " ", "-", "_", ".", "=", ":", "\\n", "/", "@", "A")


def _fill(unit: str, size: int) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


def variants(seeds, size: int):
    """(label, text) pairs for each seed."""
    for seed in seeds:
        yield f"{seed!r}*", _fill(seed, size)
        for f in FILLERS:
            yield f"{seed!r}+{f!r}*", seed + _fill(f, size - len(seed))
        for k in (9, 19, 35, 79, 127, 299):
            yield f"({seed!r}+a*{k}+' ')*", _fill(seed + "a" * k + " ", size)
            yield f"({seed!r}+aB1*{k})*", _fill(seed + "aB1" * (k // 3 + 1), size)


# Extra seeds per rule family: the shapes a rule's own structure is weakest against.
EXTRA = {
    "private-key": ["-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----\nMIIB",
                    "-----BEGIN A A A A A A", "-----BEGIN " + "A" * 30, "-----BEGIN PRIVATE KEY-----\\n-"],
    "jwt": ["eyJ", "eyJabcdef.", "eyJabcdef.eyJ", "eyJabcdef.eyJabcdef."],
    "url-password": ["://", "a://a:", "://" + "u" * 130 + ":", "://u:" + "p" * 250, "://u:p@"],
    "url-token": ["://", "://" + "t" * 300],
    "authorization": ["Authorization: ", "Authorization: Bearer ", "authorization=\\\"Basic "],
    "bearer": ["Bearer ", "bearer\t"], "basic-auth": ["Basic "],
    "api-key-header": ["X-API-Key: ", "x-api-key:\\\"", "Api-Key:"],
    "curl-user": ["-u ", "--user=", "-u a:"],
    "url-query": ["?token=", "&key=", ";sig="],
    "assignment": ["password=", "password: ", "\"password\": \"", "a_password_b = ", "token=",
                   "\\npassword: ", "x" * 81 + "_token=", "key:", "\"secret\":\\\""],
    "telegram-bot": ["1234:AA", ":AA"], "azure-ad-client-secret": ["abc1Q~", "Q~"],
    "terraform": [".atlasv1."], "slack-webhook": ["hooks.slack.com/services/"],
    "discord-webhook": ["discord.com/api/webhooks/", "discord.com/api/webhooks/123456/"],
    "teams-webhook": ["webhook.office.com/webhookb2/"],
    "netrc": ["machine ", "machine a login ", "machine a login b password ", "default login a ",
              "machine a\\n login b\\n account c port d login e password ",
              "default login a password \\\"", "machine a login b account "],
}


def seeds_for(rule) -> list[str]:
    family, _group, triggers, _pattern, _repl = rule
    seeds: list[str] = []
    for t in triggers:
        parts = t if isinstance(t, tuple) else (t,)
        text = "".join(p.decode() if isinstance(p, bytes) else p for p in parts)
        seeds.append(text)
        seeds.append(text.upper())
    return seeds + EXTRA.get(family, [])


def everything(size: int) -> str:
    """One payload with every rule's worst cases, about `size` characters in all."""
    from memhooks.redact import RULES

    pieces = []
    for rule in RULES:
        for seed in seeds_for(rule):
            pieces.append(_fill(seed, 2000))
            pieces.append(seed + "aB1" * 700)
            pieces.append(_fill(seed + "a" * 35 + " ", 2000))
    unit = "\n".join(pieces)
    return _fill(unit, size)
