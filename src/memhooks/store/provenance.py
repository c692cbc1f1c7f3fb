"""Where a stored document came from, as readers say it (standard library only: the serve
decision reads it). Documents a team pull or a team search brought in carry the team
note memhooks.team.pull writes in their metadata (`team.member`); everything the agent
reads from them names the team store and that member."""

_MEMBER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
TEAM_TOOLS = ("team-pull", "team-search")


def team_member_label(member) -> str:
    """A team member id for display: as memhooks makes them (letters, digits, `_-`), else
    `unknown`."""
    ok = isinstance(member, str) and 0 < len(member) <= 64 and set(member) <= _MEMBER_CHARS
    return member if ok else "unknown"


def team_provenance(conn, ids) -> dict[int, str]:
    """id -> `team:<member>` for the documents among `ids` that came from the team store."""
    ids = list(ids)
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT id, CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.team.member') END"
        f" FROM documents WHERE id IN ({','.join('?' * len(ids))}) AND tool IN (?, ?)",  # noqa: S608
        (*ids, *TEAM_TOOLS))
    return {r[0]: "team:" + team_member_label(r[1]) for r in rows}


def team_note(conn, ids) -> str:
    """`; this text came from the team store (…)` for a served answer any of whose documents
    came from the team store, else ''."""
    members = sorted({p[5:] for p in team_provenance(conn, ids).values()})
    if not members:
        return ""
    return (f"; this text came from the team store (shared by team member {', '.join(members[:5])}),"
            " not from this machine's own lookups")
