"""Where a stored document came from, as readers say it (standard library only: the serve
decision reads it). Admission keeps each row's provenance (`capture`, `import`, `manual`,
`added`, `warm` or `team:<member>`); everything the agent reads from a document whose
provenance is `team:<member>` names the team store and that member."""

_MEMBER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
TEAM_PREFIX = "team:"


def team_member_label(member) -> str:
    """A team member id for display: as admission admits them (letters, digits, `._-`, at
    most 64), else `unknown`."""
    ok = isinstance(member, str) and 0 < len(member) <= 64 and set(member) <= _MEMBER_CHARS
    return member if ok else "unknown"


def team_label(provenance) -> str | None:
    """`team:<member>` (member checked) for a team provenance, else None."""
    if isinstance(provenance, str) and provenance.startswith(TEAM_PREFIX):
        return TEAM_PREFIX + team_member_label(provenance[len(TEAM_PREFIX):])
    return None


def team_provenance(conn, ids) -> dict[int, str]:
    """id -> `team:<member>` for the documents among `ids` that came from the team store."""
    ids = list(ids)
    if not ids:
        return {}
    rows = conn.execute(f"SELECT id, provenance FROM documents WHERE id IN ({','.join('?' * len(ids))})"
                        " AND provenance LIKE 'team:%'", ids)
    # LIKE ignores case, team_label does not: a `TEAM:` row is no team row
    return {r[0]: label for r in rows if (label := team_label(r[1])) is not None}


def team_note(conn, ids) -> str:
    """`; this text came from the team store (…)` for a served answer any of whose documents
    came from the team store, else ''."""
    members = sorted({p[len(TEAM_PREFIX):] for p in team_provenance(conn, ids).values()})
    if not members:
        return ""
    return (f"; this text came from the team store (shared by team member {', '.join(members[:5])}),"
            " not from this machine's own lookups")


_RESOLVE_SOURCES = {"capture": "an earlier resolve-library-id", "write": "an lc-cache-write",
                    "warm-local": "the project's lockfile", "warm-api": "the Context7 API at session start",
                    "libraries": "an earlier resolve-library-id"}


def resolve_source(origin, matched) -> str:
    """Where a served library ID came from, in words: a team answer (tier1 matched `team`,
    taken because this machine's own knowledge agreed) says the team store."""
    if matched == "team":
        return "the team store (confirmed by this machine's own lookups)"
    return _RESOLVE_SOURCES.get(origin, "an earlier lookup")
