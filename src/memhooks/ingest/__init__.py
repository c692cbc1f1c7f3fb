"""Ingest: journal events -> adapters (pure) -> records for the projections."""
