"""How the commands print their results: words, rows and summaries, apart from the commands.

Each function takes the data a library call returned and gives lines (or a JSON-ready dict);
nothing here reads the store or the network."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from memhooks.egress import one_line
from memhooks.names import checked_library_id
from memhooks.warm.resolve import _fault_words, _until_words

# What each warm outcome means, in one word or two (memhooks.warm.resolve.Resolved.how).
WARM_STATUS = {
    "tier1": "cached",
    "warm-local": "known",
    "warm-api": "resolved",
    "not-found": "not in Context7",
    "api-error": "API error",
    "api-timeout": "API timeout",
    "api-rate-limited": "rate limited",
    "rejected": "rejected",
    "unresolved": "not asked",
}
API_NEEDED = {"warm-api", "not-found", "api-error", "api-timeout", "api-rate-limited", "unresolved"}


def _s(n: int) -> str:
    return "s" if n != 1 else ""


# ----------------------------------------------------------------------------- scan

def scan_json(project: str, result, ranked) -> dict:
    return {"project": project, "files": result.files, "errors": result.errors,
            # what was left out: names/versions failing their grammar, files too large,
            # unreadable, not regular, outside the project root, ...
            "skipped": result.skipped,
            "dropped": {"names": result.skipped.get("names-dropped", 0),
                        "versions": result.skipped.get("versions-dropped", 0)},
            "complete": result.complete, "budget": result.budget,
            "seconds": round(result.seconds, 3), "bytes_read": result.bytes_read,
            "libraries": [{"name": d.name, "ecosystem": d.ecosystem, "version": d.version,
                           "kind": d.kind, "manifests": d.manifests} for d in ranked]}


def scan_lines(result, ranked) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr lines) for `memhooks scan`."""
    out = [f"{i:3d}. {d.name}@{d.version or 'unpinned'}  [{d.ecosystem}, {d.kind}]"
           for i, d in enumerate(ranked, 1)]
    err = [] if ranked else ["no dependencies found"]
    err += [f"skipped: {e}" for e in result.errors]
    if result.skipped:
        err.append("left out: " + ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items())))
    if not result.complete:
        err.append(f"scan cut short by its {result.budget} budget; the next warm continues it")
    return out, err


# ----------------------------------------------------------------------------- warm

def api_needed(result) -> bool:
    return any(r.how in API_NEEDED for r in result.entries)


def _not_asked(result) -> list:
    """Libraries left unresolved because the API could not be asked (network, rate limit,
    offline): one summary line for them, not a row each."""
    return [r for r in result.entries
            if r.how in ("unresolved", "api-error", "api-timeout", "api-rate-limited") and not r.library_id]


def _shown_id(library_id) -> str:
    """A library ID for the terminal: itself in the Context7 grammar, `-` for none, else withheld."""
    if not library_id:
        return "-"
    return checked_library_id(library_id) or "(malformed ID withheld)"


def warm_rows(entries) -> list[str]:
    """One line per library: name@version (or unpinned), the library ID or -, a status word
    (every stored or outside value through memhooks.egress.one_line or the ID grammar)."""
    labels = [one_line(f"{r.name}@{r.version or 'unpinned'}", 120) for r in entries]
    ids = [_shown_id(r.library_id) for r in entries]
    width = min(44, max((len(x) for x in labels), default=0))
    idw = min(40, max((len(x) for x in ids), default=1))
    return [f"{label:<{width}}  {lid:<{idw}}  {WARM_STATUS.get(r.how, r.how)}"
            for label, lid, r in zip(labels, ids, entries, strict=True)]


def warm_entries(result) -> list[dict]:
    return [{"name": r.name, "ecosystem": r.ecosystem, "version": r.version,
             "library_id": r.library_id, "versioned_id": r.versioned_id, "how": r.how,
             "status": WARM_STATUS.get(r.how, r.how), "cause": r.cause}
            for r in result.entries]


def warm_json(project: str, result) -> dict:
    return {"project": project, "entries": warm_entries(result), "files": result.scanned_files,
            "api_requests": result.api_requests, "rate_limited": result.rate_limited,
            "api_unreachable": result.unreachable, "api_needed": api_needed(result),
            "api_fault": result.api_fault, "api_fault_detail": result.api_fault_detail,
            "api_until": result.api_until, "scan_complete": result.scan_complete,
            "scan_budget": result.scan_budget, "skipped": result.skipped,
            "seconds": round(result.seconds, 3), "errors": result.errors,
            # search results left out because they were another library than the name asked
            "rejected": result.rejected}


def warm_lines(result, api_url: str) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr lines) for `memhooks warm`: a row per library, then the summary."""
    out = []
    waiting = _not_asked(result) if (result.api_fault or result.unreachable or result.rate_limited) else []
    shown = [r for r in result.entries if r not in waiting]
    for line, r in zip(warm_rows(shown), shown, strict=True):
        # One fault for the whole run is said once, below; other causes stand on their row.
        own = r.cause and not r.library_id and not result.api_fault
        out.append(line + (f" — {one_line(r.cause, 200)}" if own else ""))
    n_files, n_req = len(result.scanned_files), result.api_requests
    out.append(f"{len(result.resolved)}/{len(result.entries)} resolved from {n_files} "
               f"file{_s(n_files)} in {result.seconds:.2f}s "
               f"({n_req} API request{_s(n_req)})")
    if result.rejected:
        n = result.rejected
        out.append(f"{n} Context7 answer{_s(n)} rejected: the result did not match the name asked "
                   "(left out: not cached, not told to the agent).")
    if waiting:
        fault = (result.api_fault or ("rate-limited" if result.rate_limited else "unreachable"))
        fault = fault.removeprefix("backoff:")
        cached = len(result.resolved)
        where = f" at {api_url}" if fault == "unreachable" else ""
        n = len(waiting)
        out.append(f"{n} librar{'y' if n == 1 else 'ies'} not looked up yet: {_fault_words(fault, result.api_fault_detail)}{where}"
                   f"{_until_words(result.api_until)}. "
                   f"{cached or 'No'} librar{'y is' if cached == 1 else 'ies are'} already cached; "
                   "memhooks asks again at the next session start (or run `memhooks warm` later).")
    err = [] if result.entries else ["no dependencies found (no lockfile or manifest memhooks reads)"]
    return out, err


@contextlib.contextmanager
def warm_progress(project: str) -> Iterator[dict]:
    """A live status line on stderr while warming; yields the warm's two progress callbacks."""
    with Console(stderr=True).status(f"scanning {project} …") as status:
        asked: dict[str, str | None] = {}

        def progress(r):
            status.update(f"checking the cache: {r.name}")

        def api_progress(name, state):
            asked[name] = state
            waiting = [n for n, st in asked.items() if st is None]
            done = len(asked) - len(waiting)
            now = ", ".join(waiting[:3]) + (" …" if len(waiting) > 3 else "")
            status.update(f"asking the Context7 API: {done}/{len(asked)} answered"
                          + (f"; waiting for {now}" if waiting else ""))

        yield {"progress": progress, "api_progress": api_progress}


# ----------------------------------------------------------------------------- team

def team_push_line(s: dict) -> str:
    return (f"pushed {s['documents']} documents ({s['documents_new']} new to the team, "
            f"{s['bytes']:,} bytes), {s['libraries']} libraries, {s['tier1']} tier1 entries, "
            f"{s['forgotten']} forgotten; {s['excluded']} excluded"
            + ("" if s["complete"] else "; budget spent, run again to continue"))


def team_pull_line(s: dict) -> str:
    return (f"pulled {s['documents']} documents ({s['bytes']:,} bytes), {s['tier1']} tier1 entries, "
            f"{s['libraries']} libraries; {s['forgotten']} forgotten by the team removed"
            + (f"; {s['suggested']} unverified team suggestions" if s.get("suggested") else "")
            + (f"; {s['refused']} team rows refused" if s.get("refused") else "")
            + ("" if s["complete"] else "; budget reached, run again for more"))


def _server_lines(srv: dict) -> list[str]:
    if srv.get("error"):
        return [f"server: {srv['error']}"]
    lines = [f"server: PostgreSQL {srv['server_version']}, {srv['schema']}, {srv['ms']} ms, "
             + ("writable" if srv.get("writable") else "read-only" if srv.get("writable") is False
                else "writes not checked")]
    if srv.get("team"):
        t = srv["team"]
        lines.append(f"team: {t['documents']} documents, {t['libraries']} libraries, {t['members']} members")
    return lines


def team_status_lines(info: dict) -> list[str]:
    """`memhooks team status` for people (password masked upstream, in memhooks.team.status)."""
    if not info["configured"]:
        return ["team store: not configured (set MEMHOOKS_TEAM_URL or run `memhooks team connect URL`)"]
    lines = [f"team store: {info['url']} (from {info['source']})",
             f"member id: {info['member_id'] or '(not pushed yet)'}"]
    if info.get("server"):
        lines += _server_lines(info["server"])
    loc = info["local"]
    lines.append(f"local: {loc['documents']} documents, {loc['pushed']} pushed, {loc['forgotten']} forgotten"
                 f" ({loc['forgets_pending']} not yet sent)")
    for op in ("push", "pull"):
        if op in info["backoff"]:
            b = info["backoff"][op]
            lines.append(f"{op}: backing off until {b['until']} after {b['failures']} failure(s): {b['reason']}")
        last = info["last"].get(op)
        if last:
            lines.append(f"last {op}: {last['at']}")
    if info["exclude"]:
        lines.append("excluded projects: " + ", ".join(info["exclude"]))
    return lines


# ----------------------------------------------------------------------------- import-transcripts

@contextlib.contextmanager
def transcript_progress(show: bool):
    """A progress bar on stderr while transcripts are read (None when not shown); yields the
    `progress(done, total, path)` callback for memhooks.capture.backfill.import_transcripts."""
    if not show:
        yield None
        return

    bar = Progress(TextColumn("reading transcripts"), BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=False)
    task = None

    def progress(done, total, path):
        nonlocal task
        if task is None:
            task = bar.add_task("read", total=max(total, 1))
        bar.update(task, completed=done)

    bar.start()
    try:
        yield progress
    finally:
        bar.stop()
