"""Recall: every reader of the projections (lc-cache-*, search, stats, MCP server)."""
