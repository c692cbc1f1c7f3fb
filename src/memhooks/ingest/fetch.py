"""Fetching for `memhooks add` / `refresh` (httpx; a cold path): one site, inside limits.

Every answer is outside text from a server that may be hostile, so:

* only http(s) URLs are asked for (memhooks.ingest.pages.checked_url: no `file:`, `data:`,
  credentials or controls); redirects are never followed by httpx but here, one hop at a
  time, each hop checked: a hop to another site (scheme, host and port), to a URL that is
  not http(s), back to a URL already visited, or past the fifth is not followed;
* a body is streamed and counted as it arrives: a response over the per-page cap (or what
  is left of the run's byte budget) is cut off there, never read whole into memory; a
  compressed body (gzip, deflate) is inflated with a bound on its output, so a small
  compressed bomb costs the cap, not its size; other encodings are refused;
* time: one run has a wall-time budget, checked between reads; every request has a timeout
  (connect to last byte) no longer than what is left of the budget, and each read waits at
  most that long: a server that drip-feeds its page is stopped at the budget;
* robots.txt is read once per site per run (capped at 512 KiB) and respected with
  urllib.robotparser (user agent `memhooks`): 401/403 disallow everything, other 4xx (and a
  robots.txt that redirects off-site) allow everything, a 5xx or no answer disallow
  everything (RFC 9309); a `Crawl-delay` is kept up to 10 s.

`Fetcher.downloaded` counts the body bytes read from the network this run (as sent: still
compressed): what a `memhooks add` or `refresh` cost in bandwidth.
"""

from __future__ import annotations

import socket
import time
import zlib
from dataclasses import dataclass, field
from urllib.robotparser import RobotFileParser

import httpx

from memhooks import __version__, config
from memhooks.ingest.pages import checked_url, decode_body, same_site, site_of

ROBOTS_AGENT = "memhooks"
USER_AGENT = f"memhooks/{__version__} (memhooks add)"
ROBOTS_MAX_BYTES = 512 * 1024
MAX_REDIRECTS = 5
MAX_CRAWL_DELAY_S = 10.0
REDIRECTS = (301, 302, 303, 307, 308)
ACCEPT = "text/markdown, text/plain;q=0.9, text/html;q=0.8, */*;q=0.1"


@dataclass
class Limits:
    """What one run may spend (defaults: memhooks.config, MEMHOOKS_ADD_* overrides)."""
    pages: int
    page_bytes: int
    total_bytes: int
    budget_s: float
    timeout_s: float

    @classmethod
    def from_config(cls, **overrides) -> Limits:
        values: dict = {"pages": config.add_max_pages(), "page_bytes": config.add_max_page_bytes(),
                  "total_bytes": config.add_max_bytes(), "budget_s": config.add_budget_s(),
                  "timeout_s": config.add_timeout_s()}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclass
class Fetched:
    """One GET, after the redirects that were followed."""
    url: str
    final_url: str
    status: int | None = None  # of the last answer; None when there was none
    body: bytes = b""  # inflated, at most the cap
    wire_bytes: int = 0  # body bytes read from the network (as sent)
    truncated: bool = False  # the body went on past the cap and was cut there
    etag: str | None = None
    last_modified: str | None = None
    content_type: str | None = None
    error: str | None = None  # why there is nothing to store (None for a 200 or a 304)
    redirects: list[str] = field(default_factory=list)

    @property
    def not_modified(self) -> bool:
        return self.status == 304 and self.error is None

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.error is None


def _header(value: str | None, limit: int = 512) -> str | None:
    """A validator header worth sending back: printable ASCII, bounded; else None."""
    if not value:
        return None
    v = value.strip()
    if not v or len(v) > limit or not v.isascii() or not v.isprintable():
        return None
    return v


def network_cause(exc: BaseException) -> str:
    """What went wrong on the network, in words: DNS, connection refused, a reset, or the
    exception's name (the chain of causes is looked through)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, socket.gaierror) or "name or service not known" in str(cur).lower() \
                or "nodename nor servname" in str(cur).lower() \
                or "temporary failure in name resolution" in str(cur).lower():
            return "DNS lookup failed: the host name does not resolve (no network, or no such host)"
        if isinstance(cur, ConnectionRefusedError) or "connection refused" in str(cur).lower():
            return "connection refused: nothing listens at that address"
        if isinstance(cur, ConnectionResetError):
            return "connection reset"
        if isinstance(cur, (TimeoutError, httpx.TimeoutException)):
            return "no answer: timed out"
        if isinstance(cur, OSError) and "network is unreachable" in str(cur).lower():
            return "network unreachable: no network?"
        cur = cur.__cause__ or cur.__context__
    return f"no answer ({type(exc).__name__})"


class Fetcher:
    """GETs for one run, sharing its limits: time, bytes, and robots.txt per site."""

    def __init__(self, limits: Limits, *, clock=time.monotonic, sleep=time.sleep):
        self.limits = limits
        self._clock, self._sleep = clock, sleep
        self.started = clock()
        self.deadline = self.started + limits.budget_s
        self.downloaded = 0
        self.requests = 0
        self.limits_hit: set[str] = set()
        self._robots: dict = {}
        self._robots_trouble: dict[str, str] = {}  # site -> why its robots.txt could not be read
        self._delay: dict[str, float] = {}
        self._last_request: dict[str, float] = {}
        self._client = httpx.Client(
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept": ACCEPT,
                     "Accept-Encoding": "gzip, deflate"},
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---------------------------------------------------------------- budgets

    def time_left(self) -> float:
        return self.deadline - self._clock()

    def elapsed(self) -> float:
        return self._clock() - self.started

    def spent(self) -> str | None:
        """'time' or 'bytes' when that budget of the run is spent (and remembered), else None."""
        why = None
        if self.time_left() <= 0:
            why = "time"
        elif self.downloaded >= self.limits.total_bytes:
            why = "bytes"
        if why:
            self.limits_hit.add(why)
        return why

    # ---------------------------------------------------------------- robots.txt

    def allowed(self, url: str) -> bool:
        """Whether robots.txt of the URL's site lets memhooks fetch it (read once per run)."""
        site = site_of(url)
        if site not in self._robots:
            self._robots[site] = self._load_robots(site)
        return self._robots[site].can_fetch(ROBOTS_AGENT, url)

    def refusal(self, url: str) -> str:
        """Why `allowed(url)` said no, naming the real cause: the site gave no answer
        (DNS, refused, timeout), its robots.txt failed (5xx), or robots.txt said no."""
        site = site_of(url)
        trouble = self._robots_trouble.get(site)
        if trouble is not None:
            return trouble
        return f"robots.txt of {site} does not let memhooks fetch {url}"

    def _load_robots(self, site: str):
        rules = RobotFileParser()
        got = self.get(f"{site}/robots.txt", max_bytes=ROBOTS_MAX_BYTES, polite=False)
        everything = ["User-agent: *", "Disallow: /"]
        if got.ok:
            rules.parse((decode_body(got.body, "text/plain") or "").splitlines())
        elif got.status in (401, 403):
            rules.parse(everything)
        elif got.status is not None and (400 <= got.status < 500 or got.status in REDIRECTS):
            rules.parse([])  # none, or one we may not follow: no rules
        else:
            rules.parse(everything)  # 5xx or no answer: assume everything is off limits
            if got.status is None:
                self._robots_trouble[site] = f"cannot reach {site}: {got.error}"
            else:
                self._robots_trouble[site] = (
                    f"robots.txt of {site} answered HTTP {got.status}: memhooks fetches nothing "
                    "from a site whose robots.txt fails (RFC 9309)")
        try:
            delay = float(rules.crawl_delay(ROBOTS_AGENT) or 0)
        except (TypeError, ValueError):
            delay = 0.0
        self._delay[site] = min(max(delay, 0.0), MAX_CRAWL_DELAY_S)
        return rules

    def _wait_turn(self, site: str) -> None:
        delay = self._delay.get(site, 0.0)
        last = self._last_request.get(site)
        if delay and last is not None:
            wait = last + delay - self._clock()
            if wait > 0:
                self._sleep(min(wait, max(0.0, self.time_left())))

    # ---------------------------------------------------------------- GET

    def get(self, url: str, *, etag: str | None = None, last_modified: str | None = None,
            max_bytes: int | None = None, polite: bool = True) -> Fetched:
        """GET a checked URL, with validators when given (a 304 then has no body). Redirects
        within the site are followed, each hop checked; the body is read up to the cap."""
        site = site_of(url)
        result = Fetched(url, url)
        seen = {url}
        current = url
        headers: dict[str, str] = {}
        tag, stamp = _header(etag), _header(last_modified)
        if tag:
            headers["If-None-Match"] = tag
        if stamp:
            headers["If-Modified-Since"] = stamp
        while True:
            why = self.spent()
            if why:
                result.error = f"{why} budget of the run spent"
                return result
            if polite:
                self._wait_turn(site)
            start = self._clock()
            request_deadline = min(self.deadline, start + self.limits.timeout_s)
            wait = max(0.05, request_deadline - start)
            self._last_request[site] = start
            try:
                with self._client.stream("GET", current, headers=headers,
                                         timeout=httpx.Timeout(wait)) as resp:
                    self.requests += 1
                    result.status = resp.status_code
                    if resp.status_code in REDIRECTS:
                        nxt = self._next_hop(resp.headers.get("location"), current, site, seen, result)
                        if nxt is None:
                            return result
                        result.redirects.append(nxt)
                        current = result.final_url = nxt
                        continue
                    result.etag = _header(resp.headers.get("etag"))
                    result.last_modified = _header(resp.headers.get("last-modified"))
                    result.content_type = _header(resp.headers.get("content-type"), 200)
                    if resp.status_code == 304:
                        return result
                    if resp.status_code != 200:
                        result.error = (f"not found (HTTP {resp.status_code})"
                                        if resp.status_code in (404, 410) else f"HTTP {resp.status_code}")
                        return result  # the body of an error answer is never read
                    self._read(resp, result, max_bytes, request_deadline)
                    return result
            except httpx.TimeoutException:
                result.error = self._late(request_deadline)
                return result
            except (httpx.HTTPError, httpx.InvalidURL, ValueError, UnicodeError, OSError) as exc:
                result.error = network_cause(exc)
                return result

    def _next_hop(self, location: str | None, current: str, site: str, seen: set,
                  result: Fetched) -> str | None:
        nxt = checked_url(location, current) if location else None
        if nxt is None:
            result.error = "redirect to a URL that is not http(s)"
        elif not same_site(nxt, site):
            result.error = f"redirect off-site (to {site_of(nxt)}): not followed"
        elif nxt in seen:
            result.error = "redirect loop"
        elif len(seen) > MAX_REDIRECTS:
            result.error = "too many redirects"
        else:
            seen.add(nxt)
            return nxt
        return None

    def _late(self, request_deadline: float) -> str:
        if self.time_left() <= 0:
            self.limits_hit.add("time")
            return "stopped: time budget of the run spent"
        return f"timed out after {self.limits.timeout_s:g} s"

    def _read(self, resp: httpx.Response, result: Fetched, max_bytes: int | None,
              request_deadline: float) -> None:
        """Stream the body into `result`, up to the cap, inflating gzip/deflate with a bound."""
        cap = min(max_bytes or self.limits.page_bytes, self.limits.page_bytes,
                  max(0, self.limits.total_bytes - self.downloaded))
        encoding = (resp.headers.get("content-encoding") or "").strip().lower()
        inflate = None
        if encoding in ("gzip", "x-gzip"):
            inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            inflate = zlib.decompressobj()
        elif encoding not in ("", "identity"):
            result.error = f"content encoding {encoding[:20]!r} not supported"
            return
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in resp.iter_raw():
                self.downloaded += len(chunk)
                result.wire_bytes += len(chunk)
                room = cap - size
                data = inflate.decompress(chunk, room + 1) if inflate is not None else chunk
                if len(data) > room or result.wire_bytes > cap:
                    parts.append(data[:room])
                    size += min(room, len(data))
                    result.truncated = True
                    break
                parts.append(data)
                size += len(data)
                if self._clock() > request_deadline:
                    result.error = self._late(request_deadline)
                    break
        except zlib.error:
            result.error = "body does not inflate"
        except httpx.TimeoutException:
            result.error = self._late(request_deadline)
        except (httpx.HTTPError, OSError) as exc:
            result.error = f"answer broken off ({type(exc).__name__})"
        result.body = b"".join(parts)
        if result.truncated and cap < min(max_bytes or self.limits.page_bytes, self.limits.page_bytes):
            self.limits_hit.add("bytes")  # the run's byte budget ended inside this page
