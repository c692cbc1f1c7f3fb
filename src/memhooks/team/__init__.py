"""The team store: a shared PostgreSQL database that members push to and pull from.

Optional (`pip install 'memhooks[team]'`). Nothing in this package runs on a hot path;
psycopg is imported only inside the functions that talk to the server.
"""
