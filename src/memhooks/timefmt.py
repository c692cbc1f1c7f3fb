"""Times as text (standard library only): the one ISO-8601 UTC form the store and the
readers write."""

import time


def iso(epoch: float | None) -> str | None:
    """`2026-01-31T12:00:00Z` for an epoch in seconds; None for None."""
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
