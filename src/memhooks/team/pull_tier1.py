"""The team's tier1 answers in a pull: taken when local knowledge agrees, else kept as an
unverified team suggestion (memhooks.team.trust). A member can write any tier1 row under
any member id, so neither the number of members behind an answer nor its dates decide
anything: the answer must agree with what this machine found itself (its own resolution,
a captured resolve-library-id output or its own Context7 API search naming that library
for the name, or the repository the lockfile names), or it is only ever shown as a
suggestion, never served or printed as an answer."""

from __future__ import annotations

from memhooks import config
from memhooks.names import library_base, lookup_keys, loose_key, normalize
from memhooks.store import team_local as tl
from memhooks.store.admission import Refused
from memhooks.store.connect import transaction
from memhooks.store.projections import upsert_tier1
from memhooks.team.trust import (
    TEAM_SUGGESTION,
    TEAM_VERIFIED,
    checked_library,
    clamp_time,
    provenance,
)

TIER1_LIMIT = 2000


def _keys_for(names: list[dict]) -> tuple[list[str], list[str]]:
    keys: list[str] = []
    loose: list[str] = []
    for n in names:
        keys.append(normalize(n["name"], n.get("ecosystem")))
        keys += lookup_keys(n["name"])
        loose.append(loose_key(n["name"]))
    return sorted({k for k in keys if k}), sorted({k for k in loose if k})


def _team_tier1(pg, budget, keys: list[str], loose: list[str], since: float, now: float) -> list[dict]:
    """The team's positive answers for these keys, fresh by this machine's TTL (a row dated in
    the future counts as now): one row per (name_key, library_id) with how many member ids
    sent it (a hint only: a member can write rows under any id)."""
    with budget.query(pg) as cur:
        return cur.execute(
            "SELECT name_key, library_id, max(left(loose_key, 300)) AS loose_key,"
            " count(DISTINCT member_id) AS members, least(max(resolved_at), %(now)s) AS resolved_at,"
            " (array_agg(left(versioned_id, 330) ORDER BY resolved_at DESC))[1] AS versioned_id,"
            " (array_agg(left(member_id, 64) ORDER BY resolved_at DESC))[1] AS member"
            " FROM tier1 WHERE (name_key = ANY(%(keys)s) OR loose_key = ANY(%(loose)s))"
            " AND library_id <> '' AND length(library_id) <= 330 AND resolved_at > %(since)s"
            " GROUP BY name_key, library_id"
            " ORDER BY name_key, members DESC, max(resolved_at) DESC LIMIT %(limit)s",
            {"now": now, "keys": keys, "loose": loose, "since": since, "limit": TIER1_LIMIT}).fetchall()


def _repo_of_name(name: str, ecosystem: str | None) -> str | None:
    """The repository a lockfile names for a dependency, as a library base: a Go module path
    is its repository (`github.com/gin-gonic/gin` -> /gin-gonic/gin)."""
    parts = (name or "").strip().lower().split("/")
    if ecosystem == "go" and len(parts) >= 3 and parts[0] == "github.com" and parts[1] and parts[2]:
        return f"/{parts[1]}/{parts[2]}"
    return None


def agrees_locally(conn, name: str, ecosystem: str | None, base: str) -> str | None:
    """Which local knowledge agrees that `name` is the library `base`, or None: this member's
    own resolution, a captured resolve-library-id output or own API search naming it for the
    name, or the repository the lockfile names."""
    keys = [normalize(name, ecosystem), *lookup_keys(name)]
    if any(library_base(lid) == base for lid in tl.own_library_ids(conn, keys, loose_key(name))):
        return "own resolution"
    bare = list(dict.fromkeys(k for key in keys for k in (key, key.rsplit("/", 1)[-1]) if k))
    if any(library_base(lid) == base for lid in tl.seen_library_ids(conn, bare)):
        return "captured resolve output"
    if _repo_of_name(name, ecosystem) == base:
        return "lockfile repository"
    return None


def pull_tier1(conn, pg, project: str, names: list[dict], budget, now: float, summary: dict) -> set[str]:
    """Take the team's answer for a name when local knowledge agrees with it; when it does
    not, and the team is unanimous, keep it as a team suggestion (shown as unverified, never
    served or printed as an answer). Team negatives ("not in Context7") are not taken.
    Returns the library bases of the answers taken as verified."""
    keys, loose = _keys_for(names)
    ttl = config.tier1_ttl_s()
    # (row, its library base): a row whose ID has no base is no answer
    rows = [(r, base) for r in _team_tier1(pg, budget, keys, loose, now - ttl, now)
            if checked_library(r["library_id"]) and (base := library_base(r["library_id"]))]
    bases: set[str] = set()
    writes = []
    for n in names:
        key = normalize(n["name"], n.get("ecosystem"))
        wanted = {key, *lookup_keys(n["name"])}
        lk = loose_key(n["name"])
        cands = [(r, base) for r, base in rows if r["name_key"] in wanted or (lk and r["loose_key"] == lk)]
        if not cands:
            continue
        local = tl.fresh_tier1(conn, project, key, now)  # (library_id, origin, matched)
        if local and local[0] and local[2] != TEAM_SUGGESTION:
            continue  # a fresh local answer stays
        verified = [(r, base) for r, base in cands if agrees_locally(conn, n["name"], n.get("ecosystem"), base)]
        if verified:
            writes.append((n, verified[0][0], TEAM_VERIFIED))
            bases.add(verified[0][1])
        elif local and not local[0]:
            continue  # a fresh local negative is not replaced by an unverified suggestion
        elif len({base for _r, base in cands}) == 1:
            writes.append((n, cands[0][0], TEAM_SUGGESTION))
        else:
            summary["conflicting"] = summary.get("conflicting", 0) + 1  # the team disagrees: nothing taken
    if writes:
        with transaction(conn):
            for n, row, how in writes:
                lid = checked_library(row["library_id"])
                vid = checked_library(row["versioned_id"])
                if vid and library_base(vid) != library_base(lid):
                    vid = None
                resolved = clamp_time(row["resolved_at"], now) or now
                try:
                    written = upsert_tier1(conn, project=project, name=n["name"], ecosystem=n.get("ecosystem"),
                                           library_id=lid, origin="warm-local", ttl_s=ttl,
                                           version=n.get("version"), versioned_id=vid, matched=how,
                                           now=resolved, provenance=provenance(row["member"]))
                except Refused as exc:
                    summary["refused"] += 1
                    summary.setdefault("refusals", {}).setdefault(f"admission: {exc.reason}", 0)
                    summary["refusals"][f"admission: {exc.reason}"] += 1
                    continue
                if written:
                    summary["tier1" if how == TEAM_VERIFIED else "suggested"] += 1
    return bases
