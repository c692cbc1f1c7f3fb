"""Warming: scan the project's lockfiles, rank, resolve to Context7 IDs, write tier1.

Resolution order per name: a fresh tier1 entry, then global knowledge
(libraries captured or searched before, other projects' tier1), then the
Context7 API inside one overall time budget. Entries that came from captures
or explicit writes are never replaced by a warm. A search result, or knowledge that was a
first-result guess, is kept only when it agrees with the name asked (memhooks.warm.agree);
otherwise it is rejected: left out, counted, never written to tier1 nor told to the agent.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from memhooks import config
from memhooks.egress import one_line
from memhooks.names import checked_library_id, normalize, valid_library_id, valid_name
from memhooks.names import versioned_id as _versioned_id
from memhooks.store import queries
from memhooks.store.admission import Refused
from memhooks.store.connect import transaction
from memhooks.store.projections import refresh_tier1_version
from memhooks.store.projections import upsert_library as _upsert_library
from memhooks.store.projections import upsert_tier1 as _upsert_tier1
from memhooks.store.warm_state import (
    clear_api_fault,
    delete_api_state,
    save_budget,
    save_warm_state,
    set_api_state,
)
from memhooks.warm import settings
from memhooks.warm.agree import agrees
from memhooks.warm.context import (
    PARTIAL,
    RETRY_KEY,
    api_backoff,
    api_blocked,
    build_context,
    fingerprint,
    status_note,
)
from memhooks.warm.context7_api import search_many
from memhooks.warm.rank import candidates as rank_candidates
from memhooks.warm.scan import scan_project

RESUME_PREFIX = "scan.resume:"  # api_state key of a scan cut short, continued next session
RESUME_TTL_S = 24 * 3600.0
MIN_API_S = 1.0  # an API round with less time than this is not started (its timeouts would lie)
#: api_state value per fault (a 429 keeps its historical value)
FAULT_VALUE = {"rate-limited": "429", "timeout": "timeout", "unreachable": "unreachable",
               "server-error": "server-error", "bad-answer": "bad-answer"}


def versioned_id(library_id, version, known):
    vid = _versioned_id(library_id, version, known)
    return vid if vid and valid_library_id(vid) else None


@dataclass
class Resolved:
    name: str
    ecosystem: str
    version: str | None
    kind: str
    library_id: str | None = None
    versioned_id: str | None = None
    # tier1 | warm-local | warm-api | not-found | api-error | api-timeout | api-rate-limited
    # | rejected (the search answered another library) | unresolved (not asked: budget, 429
    # earlier, offline)
    how: str = "unresolved"
    cause: str = ""  # why it is unresolved, in words (empty when resolved)
    cached: bool = False  # served from tier1 that an earlier session resolved
    repository: str | None = None  # "owner/repo" a manifest names (a git dependency)
    version_from: str | None = None  # the lockfile or manifest that gave `version`
    was: str | None = None  # the version this project's tier1 had before the lockfile changed
    suggested: str | None = None  # an unverified team suggestion, shown as such when unresolved


@dataclass
class WarmResult:
    project: str
    entries: list[Resolved] = field(default_factory=list)
    scanned_files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    api_requests: int = 0
    rate_limited: bool = False
    unreachable: bool = False
    # why the Context7 API was not (fully) used: "timeout", "unreachable", "server-error",
    # "bad-answer", "rate-limited" (this warm), or "backoff:<one of those>" (an earlier
    # session's fault, still backing off), "offline"; None when it answered
    api_fault: str | None = None
    api_fault_detail: str = ""
    api_until: float | None = None  # backing off until (epoch seconds)
    scan_complete: bool = True  # False: a scan budget cut it; the next session continues
    scan_budget: str | None = None  # the budget that cut it: time, bytes, files
    skipped: dict = field(default_factory=dict)  # what the scan left out (counts)
    seconds: float = 0.0
    context: str = ""
    rejected: int = 0  # search results left out: they did not match the name asked

    @property
    def resolved(self) -> list[Resolved]:
        return [e for e in self.entries if e.library_id]


def _known_versions(conn, library_id: str) -> list[str]:
    raw = queries.library_versions(conn, library_id)
    try:
        return json.loads(raw) if raw else []
    except ValueError:
        return []


def _fresh_project_entry(conn, project: str, key: str, now: float):
    row = queries.project_tier1(conn, project, [key]).get(key)
    return row if row is not None and row["expires_at"] > now else None


def _load_resume(conn, project: str, now: float) -> dict | None:
    row = queries.api_state(conn, RESUME_PREFIX + project)
    if not row or not row["value"] or (row["until"] or 0) <= now:
        return None
    try:
        state = json.loads(row["value"])
    except ValueError:
        return None
    return state if isinstance(state, dict) else None


def _save_resume(conn, project: str, state: dict | None, now: float) -> None:
    if state is None:
        delete_api_state(conn, RESUME_PREFIX + project)
    else:
        set_api_state(conn, RESUME_PREFIX + project, json.dumps(state, separators=(",", ":")),
                      now + RESUME_TTL_S)


def _fault_words(fault: str, detail: str = "") -> str:
    words = {
        "timeout": "the Context7 API did not answer in time",
        "unreachable": "the Context7 API could not be reached",
        "server-error": "the Context7 API answered with a server error",
        "bad-answer": "the Context7 API gave an answer that is not a library search result",
        "rate-limited": "Context7 is rate-limited",
        "429": "Context7 is rate-limited",
        "offline": "the Context7 API is off (MEMHOOKS_OFFLINE)",
    }.get(fault, f"the Context7 API failed ({fault})")
    if detail and fault not in ("offline",):
        words += f" ({one_line(detail, 60)})"
    return words


def _until_words(until: float | None) -> str:
    if not until:
        return ""
    return " until " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(until))


def warm(conn, project: str, *, budget_s: float | None = None, top_n: int | None = None,
         progress=None, retry_unreachable: bool = False, direct_only: bool | None = None,
         api_progress=None) -> WarmResult:
    """Scan, rank, resolve (tier1, global knowledge, then the Context7 API inside the
    budget), write tier1 and the warm state, and say it in the context text."""
    started = time.monotonic()
    budget_s = config.warm_budget_s() if budget_s is None else budget_s
    top_n = config.top_n(top_n)
    direct_only = settings.direct_only() if direct_only is None else direct_only
    result = WarmResult(project=project)
    scan, candidates = _scan(conn, project, result, top_n, direct_only)
    now = time.time()
    entries, todo = _resolve_known(conn, project, candidates, now, retry_unreachable, progress)
    result.rejected += sum(1 for r in entries if r.how == "rejected")  # remembered ones
    bumped = _bumped(conn, entries)
    run = _ask_api(conn, result, entries, todo, top_n=top_n, now=now,
                   budget_left=budget_s - (time.monotonic() - started), budget_s=budget_s,
                   retry_unreachable=retry_unreachable, api_progress=api_progress, refresh=bumped)
    now = time.time()
    with transaction(conn):
        if run is not None:
            _record_api(conn, project, result, run, todo, now)
            for r in bumped:  # the versions a library has now: the new version's pinned ID
                _store_libraries(conn, run.answers.get(r.name), now)
        chosen = _choose(entries, top_n)
        _record_tier1(conn, project, chosen, now)  # the cap bounds the IDs cached, not only told
        _record_scan(conn, project, scan, chosen, now)
        note = status_note(conn, now, documents=not any(r.library_id for r in chosen))
    result.entries = chosen
    result.context = build_context([
        {"name": r.name, "ecosystem": r.ecosystem, "version": r.version,
         "library_id": r.library_id or r.suggested, "versioned_id": r.versioned_id, "cached": r.cached,
         "suggested": not r.library_id and bool(r.suggested), "was": r.was} for r in chosen], note=note)
    result.seconds = time.monotonic() - started
    return result


def _scan(conn, project: str, result: WarmResult, top_n: int, direct_only: bool):
    """The scan (resumed where an earlier one stopped) and the ranked, checked candidates."""
    scan = scan_project(project, resume=_load_resume(conn, project, time.time()))
    result.scanned_files, result.errors = list(scan.files), list(scan.errors)
    result.scan_complete, result.scan_budget = scan.complete, scan.budget
    result.skipped = dict(scan.skipped)
    candidates = [d for d in rank_candidates(scan.deps, top_n, direct_only=direct_only)
                  if valid_name(d.name, d.ecosystem)]
    return scan, candidates


def _resolve_known(conn, project: str, candidates, now: float, retry_unreachable: bool,
                   progress) -> tuple[list[Resolved], list[Resolved]]:
    """(every candidate, those still unresolved): from this project's fresh tier1 entry,
    else global knowledge (other projects' tier1, known libraries)."""
    todo: list[Resolved] = []
    entries: list[Resolved] = []
    for dep in candidates:
        r = Resolved(dep.name, dep.ecosystem, dep.version, dep.kind,
                     repository=dep.repository, version_from=dep.version_from)
        row = _fresh_project_entry(conn, project, normalize(dep.name, dep.ecosystem), now)
        lid, matched = (row["library_id"], row["matched"]) if row is not None else (None, None)
        if row is not None and matched == "team-suggestion":
            # unverified (memhooks.team.pull): resolved as if absent; shown only if nothing else answers
            r.suggested, row, lid, matched = checked_library_id(lid), None, None, None
        if row is not None and retry_unreachable and lid is None and matched == "error":
            row = None  # a warm a person asked for retries recent failures
        if row is not None and lid is not None and checked_library_id(lid) is None:
            row = None  # a malformed ID is never shown: resolve again
        if row is not None:
            if row["version"] and dep.version and row["version"] != dep.version:
                r.was = row["version"]  # the lockfile moved on (react 18 -> 19)
            r.library_id = checked_library_id(lid) if lid else None
            r.how = "tier1" if lid else {"error": "api-error", "rejected": "rejected"}.get(
                matched or "", "not-found")
            r.cached = bool(r.library_id)
            if not lid:
                r.cause = {"error": "the last Context7 search failed; retried later",
                           "rejected": "result did not match the name (remembered)"}.get(
                    matched or "", "not in Context7 (remembered)")
        else:
            known = queries.find_tier1(conn, dep.name, project, now)
            found = checked_library_id(known["library_id"]) if known else None
            guess = known is not None and known.get("matched") == "first"
            if found and guess and not agrees(dep.name, dep.ecosystem, found,
                                               repository=r.repository):
                found = None  # an earlier first-result guess that is not this name: ask again
            if known and found:
                r.library_id, r.how = found, "warm-local"
                r.cached = known.get("origin") != "libraries"  # another project's tier1
            elif known is None:
                # A known library seen longer ago than the tier1 TTL is no fresh hit; the warm
                # may still re-resolve it offline (no request), and says so.
                stale = checked_library_id(queries.find_library(conn, dep.name) or "")
                if stale and agrees(dep.name, dep.ecosystem, stale, repository=r.repository):
                    r.library_id, r.how = stale, "warm-local"
                    r.cause = "re-resolved offline from known libraries (not checked with Context7 now)"
        entries.append(r)
        if r.how == "unresolved":
            todo.append(r)
        if progress:
            progress(r)
    return entries, todo


def _bumped(conn, entries: list[Resolved]) -> list[Resolved]:
    """Resolved names whose lockfile version changed to one the library's known versions do
    not list (so no pinned ID yet): the API is asked for their versions again."""
    return [r for r in entries if r.was and r.library_id and r.version
            and versioned_id(r.library_id, r.version, _known_versions(conn, r.library_id)) is None]


def _store_libraries(conn, answer, now: float) -> None:
    """The libraries an API answer found (title, scores, versions), as known libraries."""
    if answer is None or answer.status != "found":
        return
    for res in answer.results:
        upsert_library(conn, library_id=res["id"], title=res.get("title"),
                       origin="api", description=res.get("description"),
                       code_snippets=_int(res.get("totalSnippets")),
                       trust_score=_float(res.get("trustScore")),
                       benchmark_score=_float(res.get("benchmarkScore")),
                       versions=list(res.get("versions") or []), now=now)


def _ask_api(conn, result: WarmResult, entries: list[Resolved], todo: list[Resolved], *,
             top_n: int, now: float, budget_left: float, budget_s: float,
             retry_unreachable: bool, api_progress, refresh: list[Resolved] | None = None):
    """Ask the Context7 API about the unresolved names when the top N needs them, and about
    the libraries in `refresh` (a new version: what versions they have now), when the API is
    usable (not offline, not backing off, time left); the run, or None when not asked."""
    missing = max(0, min(top_n, len(entries)) - sum(1 for e in entries[:top_n] if e.library_id))
    if not (todo and missing):
        todo, missing = [], 0
    refresh = refresh or []
    if not (todo or refresh):
        return None
    backoff = api_backoff(conn, now)
    if api_blocked(conn, now, retry_unreachable=retry_unreachable):
        if config.offline():
            result.api_fault = "offline"
        elif backoff:
            result.api_fault = f"backoff:{backoff[0]}"
            result.api_until = backoff[1]
            result.rate_limited = backoff[0] == "429"
        why = _fault_words(backoff[0] if backoff and result.api_fault != "offline" else "offline")
        for r in todo:
            r.cause = why + (_until_words(result.api_until) if result.api_until else "")
        return None
    if budget_left < min(MIN_API_S, budget_s / 2):  # too little to tell a slow API from our hurry
        for r in todo:
            r.cause = "no time left in this session's budget; asked next time"
        return None

    # Backfill: ask in rank order until enough of the top names resolve.
    asked = {r.name: r for r in [*todo, *refresh]}
    run = search_many([r.name for r in todo] + [r.name for r in refresh], budget_s=budget_left,
                      want=missing + len(refresh),
                      query_for=lambda n: f"{n} library documentation", on_answer=api_progress,
                      accept=lambda n, results: _agreeing(asked[n], results) is not None)
    result.api_requests = run.requests
    result.rate_limited = run.retry_after_s is not None
    result.unreachable = run.unreachable
    result.api_fault, result.api_fault_detail = run.fault, run.fault_detail
    return run


def _record_api(conn, project: str, result: WarmResult, run, todo: list[Resolved],
                now: float) -> None:
    """What the API said: the back-off state, its budget headers (the last known budget), the
    libraries it found, the names it did not know (a negative tier1 entry) or failed on (a
    short-lived error entry)."""
    if run.budget is not None:
        save_budget(conn, run.budget, now)
    if run.fault is not None:
        # Back off across sessions: Retry-After after a 429; the error TTL after a
        # timeout, a hang, a refused connection, a 5xx or a garbage answer.
        until = now + (run.retry_after_s if run.retry_after_s is not None
                       else config.tier1_error_ttl_s())
        result.api_until = until
        set_api_state(conn, RETRY_KEY, FAULT_VALUE.get(run.fault, run.fault), until)
    elif any(a.status in ("found", "not-found") for a in run.answers.values()):
        # the API answered: an earlier fault (say, before a warm by hand) is over
        clear_api_fault(conn, RETRY_KEY, now)
    for r in todo:
        answer = run.answers.get(r.name)
        if answer is None:
            if run.fault is not None:
                r.cause = _fault_words(run.fault) + _until_words(result.api_until)
            else:
                r.cause = "not asked: enough names resolved, or the budget ran out"
            continue
        if answer.status == "found":
            _store_libraries(conn, answer, now)
            picked = _agreeing(r, answer.results)
            if picked is not None:
                r.library_id, r.how = picked["id"], "warm-api"
            else:  # the search answered other libraries: nothing for this name
                result.rejected += 1
                first = checked_library_id(answer.results[0]["id"]) if answer.results else None
                r.how = "rejected"
                r.cause = ("result did not match the name"
                           + (f" (Context7 answered {first})" if first else ""))
                # remembered like "not in Context7", so the next session does not ask again
                upsert_tier1(conn, project=project, name=r.name, ecosystem=r.ecosystem,
                             library_id=None, version=r.version, origin="warm-api",
                             matched="rejected", ttl_s=config.tier1_negative_ttl_s(), now=now)
        elif answer.status != "not-found":
            r.how = f"api-{answer.status}"  # error, timeout or rate-limited: retried later
            r.cause = _fault_words({"timeout": "timeout", "rate-limited": "rate-limited"}
                                   .get(answer.status, "server-error"
                                        if answer.detail.startswith("HTTP 5") else
                                        "bad-answer" if answer.detail.startswith(("HTTP", "malformed"))
                                        else "unreachable"), answer.detail)
            if answer.status in ("error", "timeout"):
                # Remember the failure briefly: the pool is tiny, and an unreachable
                # API must not cost every session its whole budget again.
                upsert_tier1(conn, project=project, name=r.name, ecosystem=r.ecosystem,
                             library_id=None, version=r.version, origin="warm-api",
                             matched="error", ttl_s=config.tier1_error_ttl_s(), now=now)
        else:
            r.how = "not-found"
            r.cause = "not in Context7"
            upsert_tier1(conn, project=project, name=r.name, ecosystem=r.ecosystem,
                         library_id=None, version=r.version, origin="warm-api",
                         matched="none", ttl_s=config.tier1_negative_ttl_s(), now=now)


def _agreeing(r: Resolved, results: list[dict]) -> dict | None:
    """The first search result that is the library `r` asked for (memhooks.warm.agree), or None."""
    for res in results:
        if agrees(r.name, r.ecosystem, res.get("id") or "", res.get("title"), r.repository):
            return res
    return None


def upsert_library(conn, **row) -> None:
    """A library from an API answer, with provenance `warm`; one admission refuses is left out."""
    try:
        _upsert_library(conn, provenance="warm", **row)
    except Refused:
        pass


def upsert_tier1(conn, **row) -> bool:
    """A tier1 entry of this warm, with provenance `warm`; False when admission refuses it."""
    try:
        return _upsert_tier1(conn, provenance="warm", **row)
    except Refused:
        return False


def _record_tier1(conn, project: str, entries: list[Resolved], now: float) -> None:
    """tier1 for names this warm resolved; a fresh entry learns the current version."""
    for r in entries:
        if r.how in ("warm-local", "warm-api") and r.library_id:  # set together
            r.versioned_id = versioned_id(r.library_id, r.version, _known_versions(conn, r.library_id))
            upsert_tier1(conn, project=project, name=r.name, ecosystem=r.ecosystem,
                         library_id=r.library_id, version=r.version, versioned_id=r.versioned_id,
                         origin=r.how, matched="warm", ttl_s=config.tier1_ttl_s(), now=now)
        elif r.how == "tier1" and r.library_id:
            r.versioned_id = versioned_id(r.library_id, r.version, _known_versions(conn, r.library_id))
            refresh_tier1_version(conn, project=project, name_key=normalize(r.name, r.ecosystem),
                                  library_id=r.library_id, version=r.version,
                                  versioned_id=r.versioned_id)


def _record_scan(conn, project: str, scan, chosen: list[Resolved], now: float) -> None:
    """The warm state: a scan a budget cut short saves what it found (the ranked names) with
    a fingerprint that never matches, and where to resume: the next session continues it."""
    _save_resume(conn, project, None if scan.complete else scan.state, now)
    fp = fingerprint(project, scan.files, scan.dirs) if scan.complete else PARTIAL
    save_warm_state(conn, project, fingerprint=fp, files=scan.files, dirs=scan.dirs,
                    ranked=[{"name": r.name, "ecosystem": r.ecosystem, "version": r.version,
                             "version_from": r.version_from} for r in chosen], now=now)


def _choose(entries: list[Resolved], top_n: int) -> list[Resolved]:
    """The top N in rank order, backfilled: resolved names first claim the N slots,
    then unresolved ones in rank order fill what is left."""
    picked = [e for e in entries if e.library_id][:top_n]
    if len(picked) < top_n:
        rest = [e for e in entries if not e.library_id][: top_n - len(picked)]
        picked += rest
    order = {id(e): i for i, e in enumerate(entries)}
    return sorted(picked, key=lambda e: order[id(e)])


def _int(v):
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _float(v):
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None
