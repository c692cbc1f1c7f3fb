"""Warm: lockfile scan, ranking and resolution to Context7 IDs (tier1), the SessionStart fast path."""
