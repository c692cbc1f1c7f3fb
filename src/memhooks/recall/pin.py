"""Version pinning: an unversioned Context7 docs call asks for the version the project's
lockfile pins (standard library only; PreToolUse's path).

When the agent calls `query-docs` / `get-library-docs` (or runs `ctx7 docs`) with an
unversioned library ID such as `/facebook/react`, `find()` looks for the version this
project pins: its tier1 entries for that ID that carry a version (SessionStart's warm writes
them from the lockfiles), and the versions Context7 lists for the library (the `libraries`
row from resolve results and API searches, and the versioned ID the warm recorded). The
listed version that stands for the installed one is chosen by `names.matching_version`
(the same version, else the most specific listed release line that holds it). The pin is:

* never made when the ID already names a version, when the call is not a docs lookup, when
  no tier1 entry of this project has a version for the ID, when two of them pin different
  versions, or when no listed version matches;
* off with `MEMHOOKS_PIN_VERSIONS=0`.

memhooks.recall.serve then answers the call as a call for the versioned ID: from the store
when its docs cover the question (the answer's label says the version was pinned), else by
letting the call run with the versioned ID (`hookSpecificOutput.updatedInput`, with
`permissionDecision: "allow"` and an `additionalContext` line that tells the agent).
"""

from memhooks._jsonlite import loads, loads_strings
from memhooks.config import switched_off
from memhooks.egress import quote, token
from memhooks.names import (
    matching_version,
    normalize,
    split_library_id,
    valid_library_id,
    valid_version,
)
from memhooks.store import queries
from memhooks.toolargs import context7_docs_args

SWITCH = "MEMHOOKS_PIN_VERSIONS"
MAX_FILE = 200  # a lockfile's path as it is told (relative to the project)


class Pin:
    """One pin: the ID the agent asked for, the versioned ID it stands for, and why (the
    package, the version its lockfile pins, and that file when the warm recorded it)."""

    __slots__ = ("asked", "library_id", "name", "version", "lockfile")

    def __init__(self, asked: str, library_id: str, name: str, version: str, lockfile: str | None):
        self.asked, self.library_id, self.name = asked, library_id, name
        self.version, self.lockfile = version, lockfile

    def __repr__(self) -> str:
        return f"Pin({self.asked!r} -> {self.library_id!r}, {self.name}@{self.version} in {self.lockfile})"


def enabled() -> bool:
    return not switched_off(SWITCH)


def find(conn, tool: str, tool_input, project: str) -> Pin | None:
    """The pin for one Context7 docs call (`tool`: `query-docs` or `get-library-docs`), or None."""
    lid, query = context7_docs_args(tool, tool_input)
    if not lid or not query or len(lid) > 300:
        return None
    asked = lid if lid.startswith("/") else "/" + lid
    while len(asked) > 1 and asked.endswith("/"):
        asked = asked[:-1]
    parts = split_library_id(asked)
    if parts is None or parts[2] is not None:
        return None  # not an ID, or one that already names a version
    owner, repo, _ = parts
    base = f"/{owner}/{repo}".lower()
    rows = [r for r in queries.pin_rows(conn, project, base) if valid_version(r["version"])]
    if len({r["version"] for r in rows}) != 1:
        return None  # no version, or two entries pinning different ones: which is unknown
    row = rows[0]
    known = loads_strings(queries.library_versions(conn, base))
    for r in rows:
        vparts = split_library_id(r["versioned_id"] or "")
        if vparts and vparts[2] and f"/{vparts[0]}/{vparts[1]}".lower() == base:
            known.append(vparts[2])
    listed = matching_version(row["version"], known)
    pinned = f"/{owner}/{repo}/{listed}" if listed else ""
    if not listed or not valid_library_id(pinned):
        return None
    name = row["name"] or row["name_key"]
    return Pin(asked, pinned, name, row["version"], _lockfile(conn, project, row))


def _lockfile(conn, project: str, row) -> str | None:
    """The file the last warm read this version from (its ranked list), or None."""
    state = queries.warm_state(conn, project)
    if state is None:
        return None
    try:
        ranked = loads(state["ranked"])
    except (TypeError, ValueError, RecursionError):
        return None
    for dep in ranked if isinstance(ranked, list) else []:
        if not isinstance(dep, dict) or not isinstance(dep.get("name"), str):
            continue
        eco = dep.get("ecosystem") if isinstance(dep.get("ecosystem"), str) else None
        if normalize(dep["name"], eco) != row["name_key"] or dep.get("version") != row["version"]:
            continue
        where = dep.get("version_from")
        if isinstance(where, str) and 0 < len(where) <= MAX_FILE:
            return where
    return None


def _source(pin: Pin) -> str:
    where = quote(pin.lockfile, MAX_FILE) if pin.lockfile else "the project's lockfile"
    return f"{quote(pin.name, 100)} {token(pin.version, 80)} in {where}"


def label(pin: Pin) -> str:
    """What a served answer's header says about the pin."""
    return (f"version pinned: {token(pin.asked)} was asked, {token(pin.library_id)} is served"
            f" ({_source(pin)})")


def context(pin: Pin) -> str:
    """What the agent is told when the call runs with the versioned ID."""
    return (f"[memhooks] Version pinned: this Context7 docs call asked for {token(pin.asked)}; memhooks"
            f" sent it as {token(pin.library_id)}, the version the project pins ({_source(pin)}), so the"
            f" answer is that version's documentation. For another version, name it in the library ID;"
            f" MEMHOOKS_PIN_VERSIONS=0 turns pinning off.")


def allow(pin: Pin, updated_input: dict) -> dict:
    """The PreToolUse object that lets the call run with the versioned ID."""
    return {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow",
        "permissionDecisionReason": f"memhooks: version pinned, {pin.asked} -> {pin.library_id}",
        "updatedInput": updated_input, "additionalContext": context(pin)}}
