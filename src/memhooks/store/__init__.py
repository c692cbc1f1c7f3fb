"""Store: connect, migrations and projections (the only code that writes projection tables)."""
