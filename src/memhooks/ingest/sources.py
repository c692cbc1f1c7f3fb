"""Sources you add: `memhooks add URL` and `memhooks refresh` (a cold path).

`add` fetches one URL. An `llms.txt` (llmstxt.org) is an index: it is stored as a document
and the pages its file lists name are fetched too, once each, in its order (the `Optional`
section last), those on the same site only (scheme, host and port); the pages' own links are
never followed, so a loop of pages (or an llms.txt listing itself) costs one visit per URL.
Anything else (a page, an `llms-full.txt`) is stored as one document. Every page goes through
the one admission (memhooks.store.sources -> projections.upsert_document, provenance `added`)
and its ETag / Last-Modified are kept.

`refresh` revalidates what was added: a conditional GET (If-None-Match, If-Modified-Since)
per page; a 304 costs no body byte and only updates when it was checked; a changed page is
stored anew and its source points at the new document; a page gone (404/410) is marked so.
When an index changed, the pages it newly lists are fetched too.

Limits of one run (memhooks.ingest.fetch.Limits; MEMHOOKS_ADD_* overrides): pages visited,
bytes per page and in all, wall time and the per-request timeout; robots.txt respected.
Fetching and parsing are here and in memhooks.ingest.fetch / .pages; the SQL in
memhooks.store.sources.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from memhooks.ingest.fetch import Fetcher, Limits
from memhooks.ingest.pages import (
    checked_url,
    is_index,
    media_type,
    page_document,
    parse_llms_txt,
    same_site,
    short_title,
    site_of,
)
from memhooks.names import checked_library_id, valid_version
from memhooks.redact import redact_text
from memhooks.store import sources as store
from memhooks.store.admission import Refused

CUT_NOTE = "\n\n[memhooks: page cut at {kept:,} bytes while downloading: the limit of one page]\n"
STORED = ("new", "updated", "unchanged")


class SourceError(Exception):
    """Why a source cannot be added or refreshed (one line, for the user)."""


@dataclass
class Visit:
    """What one page's visit came to."""
    url: str
    outcome: str  # new | updated | unchanged | not-modified | gone | failed | not-text | refused | forgotten
    document_id: int | None = None
    bytes: int = 0  # of the stored document
    downloaded: int = 0  # body bytes read from the network
    reason: str | None = None


@dataclass
class Run:
    command: str
    limits: Limits
    roots: list[str] = field(default_factory=list)
    visits: list[Visit] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)  # links not visited, by reason
    seen: set = field(default_factory=set)
    requests: int = 0
    downloaded: int = 0
    limits_hit: set = field(default_factory=set)
    seconds: float = 0.0

    def outcomes(self) -> dict[str, int]:
        return dict(Counter(v.outcome for v in self.visits))

    def as_dict(self) -> dict:
        return {
            "command": self.command,
            "roots": list(self.roots),
            "visited": len(self.visits),
            "outcomes": self.outcomes(),
            "skipped": dict(self.skipped),
            "requests": self.requests,
            "bytes_downloaded": self.downloaded,
            "bytes_stored": sum(v.bytes for v in self.visits if v.outcome in ("new", "updated")),
            "limits": asdict(self.limits),
            "limits_hit": sorted(self.limits_hit),
            "seconds": round(self.seconds, 3),
            "pages": [asdict(v) for v in self.visits],
        }


def carries_secret(url: str) -> bool:
    """Whether redaction would change the URL (a token in its query, a key in its path): such
    a URL is never fetched nor kept (the sources table holds URLs as they are)."""
    return redact_text(url) != url


def _checked_request(url: str, library_id: str | None, version: str | None):
    root = checked_url(url)
    if root is None:
        raise SourceError(f"not an http(s) URL: {url[:200]!r} (file:, data: and other schemes are never fetched)")
    if carries_secret(root):
        raise SourceError("the URL carries a credential (a token or key): memhooks keeps URLs as they are,"
                          " so it adds none that holds a secret")
    lid = None
    if library_id:
        lid = checked_library_id(library_id)
        if lid is None:
            raise SourceError(f"--library {library_id[:100]!r} is not a library ID like /owner/repo")
    if version and not valid_version(version):
        raise SourceError(f"--version {version[:100]!r} is not a version (letters, digits, ._+~!-)")
    return root, lid, version or None


def add(conn, url: str, *, library_id: str | None = None, version: str | None = None,
        limits: Limits | None = None, progress=None) -> Run:
    """Fetch `url` (and, for an llms.txt, the pages it lists) into the store. Raises
    SourceError when the URL itself cannot be added (bad URL or ID, robots.txt says no,
    no answer, not text, refused)."""
    root, lid, version = _checked_request(url, library_id, version)
    run = Run("add", limits or Limits.from_config(), roots=[root])
    with Fetcher(run.limits) as fetcher:
        try:
            _sync(conn, fetcher, run, root, lid, version, adding=True, due=None, progress=progress)
        finally:
            _close(run, fetcher)
    return run


def refresh(conn, *, url: str | None = None, older_than_s: float | None = None,
            limits: Limits | None = None, progress=None, now: float | None = None) -> Run:
    """Revalidate the sources (all, or one root or page: `url`), only those last checked
    more than `older_than_s` ago when given. Raises SourceError for a URL that is no source."""
    now = time.time() if now is None else now
    wanted = None
    if url is not None:
        wanted = checked_url(url)
        if wanted is None:
            raise SourceError(f"not an http(s) URL: {url[:200]!r}")
        if not store.due(conn, url=wanted):
            raise SourceError(f"{wanted} is not a source ('memhooks sources' lists them; "
                              "'memhooks add URL' adds one)")
    rows = store.due(conn, url=wanted, checked_before=None if older_than_s is None else now - older_than_s)
    by_root: dict[str, set] = {}
    for r in rows:
        by_root.setdefault(r["root"], set()).add(r["url"])
    run = Run("refresh", limits or Limits.from_config(), roots=list(by_root))
    with Fetcher(run.limits) as fetcher:
        try:
            for root, urls in by_root.items():
                if fetcher.spent() or len(run.visits) >= run.limits.pages:
                    if len(run.visits) >= run.limits.pages:
                        run.limits_hit.add("pages")
                    break
                _sync(conn, fetcher, run, root, None, None, adding=False, due=urls, progress=progress)
        finally:
            _close(run, fetcher)
    return run


def _close(run: Run, fetcher: Fetcher) -> None:
    run.requests, run.downloaded = fetcher.requests, fetcher.downloaded
    run.limits_hit |= fetcher.limits_hit
    run.seconds = fetcher.elapsed()


def _sync(conn, fetcher: Fetcher, run: Run, root: str, lid: str | None, version: str | None, *,
          adding: bool, due: set | None, progress) -> None:
    """Visit a root (when due) and the pages it lists or listed."""
    known = store.of_root(conn, root)
    root_row = known.get(root)
    if root_row is not None:
        lid = lid or root_row["library_id"]
        version = version or root_row["version"]
    site = site_of(root)
    kind = "index" if is_index(root) else "page"
    ctx = {"root": root, "site": site, "lid": lid, "version": version,
           "doc_type": "library-docs" if lid else "web-page"}
    listed: list[tuple[str, str | None]] = []
    if (due is None or root in due) and not fetcher.allowed(root):
        if adding and root_row is None:
            raise SourceError(fetcher.refusal(root))
        run.skipped["robots.txt"] += 1
    elif due is None or root in due:
        visit, text, base = _visit(conn, fetcher, run, root, root_row, kind, None, ctx, progress)
        if adding and root_row is None and visit.outcome not in STORED:
            store.drop_unstored(conn, root)  # a source that never was: no row left behind
            raise SourceError(f"cannot add {root}: {visit.reason or visit.outcome}")
        if text is None and adding and visit.outcome == "not-modified":
            stored = store.stored(conn, visit.document_id)  # the index as stored: new links?
            text = stored["content"] if stored is not None else None
        if text is not None and kind == "index":
            listed = [(link.url, short_title(link.title)) for link in parse_llms_txt(text, base)[1]]
    if kind == "page":
        return
    names = {u for u, _ in listed}
    order = listed + [(u, r["title"]) for u, r in known.items() if u != root and u not in names]
    if progress is not None:
        progress(len(run.visits), len(run.visits) + len(order), None)
    for url, title in order:
        if url == root or url in run.seen:
            continue  # an index listing itself, or a page listed twice: one visit per run
        if due is not None and url in known and url not in due:
            continue  # checked recently enough (--older-than)
        if not same_site(url, site):
            run.skipped["off-site"] += 1
            continue
        if url not in known and carries_secret(url):
            run.skipped["credential in URL"] += 1
            continue
        if len(run.visits) >= run.limits.pages:
            run.limits_hit.add("pages")
            run.skipped["page limit"] += 1
            continue
        if fetcher.spent():
            run.skipped[f"{fetcher.spent()} budget"] += 1
            continue
        if not fetcher.allowed(url):
            run.skipped["robots.txt"] += 1
            continue
        _visit(conn, fetcher, run, url, known.get(url), "page", title, ctx, progress)


def _visit(conn, fetcher: Fetcher, run: Run, url: str, row, kind: str, title: str | None,
           ctx: dict, progress) -> tuple[Visit, str | None, str]:
    """Fetch one page (conditionally when it is stored) and record what came of it.
    Returns (the visit, the page's text when a body came, the URL it came from)."""
    run.seen.add(url)
    lid = (row["library_id"] if row is not None else None) or ctx["lid"]
    version = (row["version"] if row is not None else None) or ctx["version"]
    doc_type = "library-docs" if lid else "web-page"
    title = title or (row["title"] if row is not None else None)
    where = {"url": url, "root": ctx["root"], "site": ctx["site"], "kind": kind, "title": title,
             "library_id": lid, "version": version}
    have = store.stored(conn, row["document_id"]) if row is not None else None
    if row is not None and have is None and store.forgotten(conn, row["content_hash"]):
        visit = Visit(url, "forgotten", reason="forgotten: never fetched again")
        return _done(run, visit, progress), None, url
    got = fetcher.get(url, etag=row["etag"] if have is not None else None,
                      last_modified=row["last_modified"] if have is not None else None)
    now = time.time()
    if got.not_modified and have is not None:
        store.mark(conn, status="ok", etag=got.etag, last_modified=got.last_modified, now=now, **where)
        visit = Visit(url, "not-modified", row["document_id"], row["bytes"], got.wire_bytes)
        return _done(run, visit, progress), None, got.final_url
    if not got.ok:
        reason = got.error or f"HTTP {got.status}"
        gone = got.status in (404, 410)
        if got.status is not None or row is not None:  # a request was answered, or a known page
            store.mark(conn, status="gone" if gone else "error", error=reason, now=now, **where)
        visit = Visit(url, "gone" if gone else "failed", downloaded=got.wire_bytes, reason=reason)
        return _done(run, visit, progress), None, got.final_url
    try:
        page = page_document(got.body, got.content_type, url, title)
    except Refused as exc:  # an error page sent as a page: the stored text (if any) stays
        store.mark(conn, status="refused", error=exc.reason, now=now, **where)
        visit = Visit(url, "refused", downloaded=got.wire_bytes, reason=exc.reason)
        return _done(run, visit, progress), None, got.final_url
    if page is None:
        reason = f"not text ({media_type(got.content_type) or 'binary'})"
        store.mark(conn, status="not-text", error=reason, now=now, **where)
        visit = Visit(url, "not-text", downloaded=got.wire_bytes, reason=reason)
        return _done(run, visit, progress), None, got.final_url
    page_title, text = page
    stored_text = text + CUT_NOTE.format(kept=len(got.body)) if got.truncated else text
    saved = store.save_page(
        conn, url=url, root=ctx["root"], site=ctx["site"], kind=kind, title=page_title,
        text=stored_text, library_id=lid, version=version, doc_type=doc_type, etag=got.etag,
        last_modified=got.last_modified, wire_bytes=got.wire_bytes, now=now)
    note = saved.error or ("cut at the limit of one page" if got.truncated else None)
    visit = Visit(url, saved.outcome, saved.document_id, saved.bytes, got.wire_bytes, note)
    return _done(run, visit, progress), text, got.final_url


def _done(run: Run, visit: Visit, progress) -> Visit:
    run.visits.append(visit)
    if progress is not None:
        progress(len(run.visits), None, visit.url)
    return visit
