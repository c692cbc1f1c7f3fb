"""What Context7's API says about its limits, read off the response headers of warm's
searches: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (and the `X-RateLimit-*`
spellings, the combined `RateLimit: limit=…, remaining=…, reset=…` field and `RateLimit-Policy`),
and `Retry-After` (seconds or an HTTP-date) on a 429.

Header values are outside text: each is parsed strictly (ASCII digits only, bounded length
and size, no sign, no control codes) and anything else is ignored, never guessed at. A reset
is a number of seconds from now, or a Unix time when it is larger than any delay allowed
(``MAX_DELAY_S``); either way it must fall within ``MAX_DELAY_S`` of now. The time a figure
was seen is the local clock when the answer arrived, never a time the server sent.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

MAX_HEADER_CHARS = 200  # a limit header is a few characters; longer is garbage
MAX_COUNT = 10**9  # more requests than this in a window is not a real figure
MAX_DELAY_S = 31 * 86400  # a reset or Retry-After further out than a month is not believed
MAX_POLICY_CHARS = 80
_DIGITS = re.compile(r"[0-9]{1,12}")
_POLICY = re.compile(r"[A-Za-z0-9;=,\"_. -]{1,80}")
# One `key=value` item of the structured `RateLimit` field (draft-ietf-httpapi-ratelimit-headers)
_ITEM = re.compile(r"\s*([a-z]{1,16})\s*=\s*([0-9]{1,12})\s*")


def _header(headers: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` present, as one bounded printable ASCII string, or None."""
    for name in names:
        try:
            value = headers.get(name)
        except Exception:  # noqa: BLE001 - a header mapping that cannot be read is no header
            return None
        if value is None:
            continue
        if not isinstance(value, str) or len(value) > MAX_HEADER_CHARS:
            return None
        value = value.strip()
        if not value or not value.isascii() or not value.isprintable():
            return None
        return value
    return None


def count(value: str | None) -> int | None:
    """A non-negative request count: ASCII digits only, at most MAX_COUNT; else None."""
    if value is None or not _DIGITS.fullmatch(value):
        return None
    n = int(value)
    return n if n <= MAX_COUNT else None


def reset_at(value: str | None, now: float) -> float | None:
    """When the window resets: `value` is seconds from now, or a Unix time (a number larger
    than MAX_DELAY_S); None unless it falls within MAX_DELAY_S of now."""
    if value is None or not _DIGITS.fullmatch(value):
        return None
    n = int(value)  # at most 12 digits: below 10**12
    at = float(n) if n > MAX_DELAY_S else now + n
    return at if now <= at <= now + MAX_DELAY_S else None


def retry_after(value: str | None, now: float) -> float | None:
    """Retry-After in seconds: a delay in seconds, or an HTTP-date after now; None when it is
    neither, is negative, or is further out than MAX_DELAY_S."""
    if value is None:
        return None
    n = count(value)
    if n is not None:
        return float(n) if n <= MAX_DELAY_S else None
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if not math.isfinite(when):
        return None
    delay = when - now
    return delay if 0 <= delay <= MAX_DELAY_S else None


def policy(value: str | None) -> str | None:
    """RateLimit-Policy (`100;w=86400`) as one short safe string, or None."""
    if value is None or len(value) > MAX_POLICY_CHARS or not _POLICY.fullmatch(value):
        return None
    return value


def _structured(value: str | None) -> dict[str, str]:
    """`limit=100, remaining=50, reset=30` (the combined RateLimit field) as strings by key;
    {} when any item is malformed (a field half understood is not used)."""
    if value is None:
        return {}
    out: dict[str, str] = {}
    for item in value.split(",")[:8]:
        m = _ITEM.fullmatch(item)
        if m is None:
            return {}
        out.setdefault(m.group(1), m.group(2))
    return out


def from_response(status: int, headers: Mapping[str, str], now: float | None = None) -> dict | None:
    """The budget figures one API answer carries, or None when it carries none:
    {limit, remaining, reset_at, policy, retry_after_s, status, seen_at}; a figure the
    headers lack, or give in a form not understood, is None. A 429 with no Remaining figure
    says none is left."""
    now = time.time() if now is None else now
    combined = _structured(_header(headers, "RateLimit"))
    limit = count(_header(headers, "RateLimit-Limit", "X-RateLimit-Limit") or combined.get("limit"))
    remaining = count(_header(headers, "RateLimit-Remaining", "X-RateLimit-Remaining")
                      or combined.get("remaining"))
    reset = reset_at(_header(headers, "RateLimit-Reset", "X-RateLimit-Reset") or combined.get("reset"), now)
    pol = policy(_header(headers, "RateLimit-Policy", "X-RateLimit-Policy"))
    retry = retry_after(_header(headers, "Retry-After"), now) if status == 429 else None
    if limit is not None and remaining is not None and remaining > limit:
        remaining = None  # the two contradict each other: believe neither's relation
    if status == 429:
        if remaining is None:
            remaining = 0
        if reset is None and retry is not None:
            reset = now + retry
    elif limit is None and remaining is None and reset is None and pol is None:
        return None
    return {"limit": limit, "remaining": remaining, "reset_at": reset, "policy": pol,
            "retry_after_s": retry, "status": status, "seen_at": now}


def newer(old: dict | None, new: dict | None) -> dict | None:
    """The later of two figures by when they were seen (the first when they tie)."""
    if new is None:
        return old
    if old is None or new["seen_at"] > old["seen_at"]:
        return new
    return old
