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

This module is the engine (trigger prefilter, lazy compile, apply); the rule table lives in
``memhooks.redact_rules`` and the value checks and replacement callbacks in
``memhooks.redact_values``.
"""

from memhooks.redact_rules import _GROUP_NEEDLES, _MAP, _MAP_NEEDLES, RULES
from memhooks.redact_values import MARK, _Scan

__all__ = ["MARK", "RULES", "families_found", "redact_bytes", "redact_text"]

_compiled: dict = {}


def _rule(index: int, kind: type):
    key = (index, kind)
    got = _compiled.get(key)
    if got is None:
        import re  # hot path: only a payload holding a rule's triggers compiles it

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
