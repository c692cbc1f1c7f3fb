"""What a team row must be before it enters the local store (the team door's own checks).

Team rows are outside text: any member who can write the team database can write any row,
bypassing memhooks. So nothing a row says about itself is taken as sent:

* a document's content must hash to its content_hash (sent to admission as the claimed
  hash: a mismatch is refused), and must not be an error text (admission's classifier);
* library IDs, versions and member ids must match their grammar, and a version is never
  a secret (a redacted version is dropped, not stored);
* timestamps are clamped to now (a row dated 2100 is dated now) and expiry is computed from
  this machine's TTLs;
* every row is then written through the projection writers with provenance `team:<member>`,
  so memhooks.store.admission checks it as it checks every door's rows.

tier1 answers are judged separately (memhooks.team.pull): one is taken only when it agrees
with this machine's own knowledge, otherwise it is kept as an unverified team suggestion.
"""

from __future__ import annotations

import math

from memhooks.names import checked_library_id, valid_version
from memhooks.redact import redact_text

PROVENANCE_PREFIX = "team:"
UNKNOWN_MEMBER = "unknown"
TEAM_SUGGESTION = "team-suggestion"  # tier1.matched of an unverified team answer
TEAM_VERIFIED = "team"  # tier1.matched of a team answer that agreed with local knowledge
_HEX = frozenset("0123456789abcdef")
_MEMBER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def valid_hash(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def checked_member(value) -> str:
    """A member id as memhooks makes them (a random hex uuid), or `unknown`."""
    if isinstance(value, str) and 0 < len(value) <= 64 and set(value) <= _MEMBER_CHARS:
        return value
    return UNKNOWN_MEMBER


def provenance(member) -> str:
    return PROVENANCE_PREFIX + checked_member(member)


def clamp_time(value, now: float) -> float | None:
    """A team timestamp as a time no later than now; None when it is not a time at all."""
    try:
        t = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(t) or t <= 0:
        return None
    return min(t, now)


def checked_version(value) -> str | None:
    """A version by its grammar, and never one the redactor would change (a token)."""
    if not valid_version(value):
        return None
    return value if redact_text(value) == value else None


def checked_library(value) -> str | None:
    return checked_library_id(value) if isinstance(value, str) and len(value) <= 330 else None
