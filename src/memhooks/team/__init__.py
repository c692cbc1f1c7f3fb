"""The team store: a shared PostgreSQL database that members push to and pull from.

Optional (`pip install 'memhooks[team]'`). Nothing in this package runs on a hot path;
psycopg is imported by team.store.driver() alone, only when a function talks to the server.
"""
