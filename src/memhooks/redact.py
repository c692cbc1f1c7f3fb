"""Secret redaction (standard library only; used on hot paths).

The same patterns run on raw hook bytes (before journaling) and on decoded text
(before projections). They aim at credentials, not at hex digests or code:
ordinary sha1/sha256 hashes, UUIDs and identifiers survive.
Replacements never contain `"` or `\\`, so redacting raw JSON keeps it valid.
"""

from __future__ import annotations

MARK = "[REDACTED]"

# Cheap substring triggers: `re` is only imported when one of these is present.
_TRIGGERS = (
    b"bearer", b"ctx7sk", b"sk-", b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_",
    b"github_pat_", b"akia", b"asia", b"private key", b"key=", b"token=",
    b"secret=", b"password=", b"xox", b"aiza",
)

# Start of a token: not glued to a word character, except after a JSON escape
# such as `\n`, so raw JSON bytes redact like decoded text.
_B = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"

_SOURCES = (
    # Authorization: Bearer <token>
    (r"(?i)(\bbearer[ \t]+)[A-Za-z0-9._~+/=-]{8,}", r"\1" + MARK),
    # Context7 API keys
    (_B + r"ctx7sk[A-Za-z0-9_-]{6,}", MARK),
    # OpenAI / Anthropic style keys: sk-..., sk-ant-..., sk-proj-...
    (_B + r"(?<!-)sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}", MARK),
    # GitHub tokens
    (_B + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}", MARK),
    (_B + r"github_pat_[A-Za-z0-9_]{30,}", MARK),
    # AWS access key IDs
    (_B + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])", MARK),
    # Slack and Google API keys
    (_B + r"xox[abposr]-[A-Za-z0-9-]{10,}", MARK),
    (_B + r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", MARK),
    # PEM private key blocks (the body may hold JSON-escaped newlines)
    (
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----",
        r"-----BEGIN \1PRIVATE KEY----- " + MARK + r" -----END \1PRIVATE KEY-----",
    ),
    # Credentials in URL queries: ?api_key=...&token=...
    (
        r"(?i)([?&;](?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|key|secret|"
        r"client[_-]?secret|password|sig|signature)=)[^&#\s\"'<>\\]+",
        r"\1" + MARK,
    ),
)

_compiled_text = None
_compiled_bytes = None


def _patterns(kind: type):
    global _compiled_text, _compiled_bytes
    import re

    if kind is bytes:
        if _compiled_bytes is None:
            _compiled_bytes = [
                (re.compile(p.encode(), re.S), r.encode()) for p, r in _SOURCES
            ]
        return _compiled_bytes
    if _compiled_text is None:
        _compiled_text = [(re.compile(p, re.S), r) for p, r in _SOURCES]
    return _compiled_text


def _may_contain(lowered: bytes) -> bool:
    return any(t in lowered for t in _TRIGGERS)


def redact_bytes(raw: bytes) -> bytes:
    if not raw or not _may_contain(raw.lower()):
        return raw
    for pattern, repl in _patterns(bytes):
        raw = pattern.sub(repl, raw)
    return raw


def redact_text(text: str) -> str:
    if not text or not _may_contain(text.lower().encode("utf-8", "ignore")):
        return text
    for pattern, repl in _patterns(str):
        text = pattern.sub(repl, text)
    return text
