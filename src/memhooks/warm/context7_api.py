"""Context7 HTTP API client for warming: concurrent searches inside one budget.

`GET {CONTEXT7_API_URL}/v2/libs/search?libraryName=…&query=…`, with
`Authorization: Bearer $CONTEXT7_API_KEY` when set (the key is never logged or
stored). A 429 stops every request at once and reports Retry-After. Every answer's
RateLimit-* / Retry-After headers are read strictly (memhooks.warm.context7_budget) and the
latest figures kept in ``SearchRun.budget``, for the store's last known budget.

The first request goes alone. When it fails in a way that says the API is not usable right
now (no connection, a timeout or a server that never answers, a 5xx, an answer that is not
the search JSON), no other request is sent and ``SearchRun.fault`` names the cause, so the
warm backs off across sessions. Every request has its own timeout inside the overall
budget, and the overall deadline is a little later than the last request's timeout, so a
hanging server is recorded as a timeout, never just cut off unrecorded.

Answers are validated with pydantic before anything is kept: library IDs must have the
Context7 shape (``memhooks.names.valid_library_id``), titles and descriptions become one
safe capped line, versions must match the version grammar.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from memhooks.config import context7_api_url
from memhooks.egress import one_line
from memhooks.log import log_error
from memhooks.names import checked_library_id, valid_version
from memhooks.warm.context7_budget import from_response, newer

MAX_CONCURRENCY = 8
DEFAULT_RETRY_AFTER_S = 600.0
MAX_RETRY_AFTER_S = 24 * 3600.0
MAX_BODY_BYTES = 2 * 1024 * 1024  # a search answer is a few KB; more is garbage
MAX_RESULTS = 10
GRACE_S = 0.25  # the overall deadline comes this much after the last request's own timeout
UNREACHABLE = ("ConnectError", "ConnectTimeout", "ProxyError", "UnsupportedProtocol")

Status = Literal["found", "not-found", "rate-limited", "error", "timeout"]
#: why the API was given up on for this and the next sessions
Fault = Literal["timeout", "unreachable", "server-error", "bad-answer", "rate-limited"]


class Library(BaseModel):
    """One search result, as much of it as memhooks keeps."""

    model_config = ConfigDict(extra="ignore")

    id: str
    title: str | None = None
    description: str | None = None
    totalSnippets: int | None = None
    trustScore: float | None = None
    benchmarkScore: float | None = None
    versions: list[Any] = []

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        lid = checked_library_id(v)
        if lid is None:
            raise ValueError("not a Context7 library ID")
        return lid

    @field_validator("title", "description", mode="before")
    @classmethod
    def _one_line(cls, v):
        if v is None or not isinstance(v, str):
            return None
        return one_line(v, 200) or None

    @field_validator("versions", mode="before")
    @classmethod
    def _versions(cls, v):
        if not isinstance(v, list):
            return []
        return [x for x in v[:200] if valid_version(x)]

    @field_validator("totalSnippets", "trustScore", "benchmarkScore", mode="before")
    @classmethod
    def _number(cls, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        return v

    def as_dict(self) -> dict:
        return self.model_dump()


class SearchBody(BaseModel):
    """`{results: [...]}`; each result is validated on its own (one bad result is dropped)."""

    model_config = ConfigDict(extra="ignore")

    results: list[Any]


@dataclass
class SearchAnswer:
    name: str
    status: Status
    results: list[dict] = field(default_factory=list)
    detail: str = ""


@dataclass
class SearchRun:
    answers: dict[str, SearchAnswer] = field(default_factory=dict)
    retry_after_s: float | None = None  # set when the API said 429
    fault: Fault | None = None  # the first request failed: back off, and why
    fault_detail: str = ""
    requests: int = 0  # requests sent (including ones that got no answer)
    #: the latest figures the API's RateLimit-* / Retry-After headers gave
    #: (memhooks.warm.context7_budget.from_response), None when no answer had any
    budget: dict | None = None

    @property
    def unreachable(self) -> bool:
        return self.fault is not None and self.fault != "rate-limited"


def parse_retry_after(value: str | None) -> float:
    if not value:
        return DEFAULT_RETRY_AFTER_S
    value = value.strip()[:64]
    try:
        secs = float(value)
        if secs != secs:  # NaN
            return DEFAULT_RETRY_AFTER_S
        return min(MAX_RETRY_AFTER_S, max(1.0, secs))
    except ValueError:
        pass
    try:
        return min(MAX_RETRY_AFTER_S, max(1.0, parsedate_to_datetime(value).timestamp() - time.time()))
    except (TypeError, ValueError, IndexError, OverflowError):
        return DEFAULT_RETRY_AFTER_S


def parse_results(raw: bytes) -> list[dict] | None:
    """The usable results of a search answer body, or None for a malformed answer."""
    if len(raw) > MAX_BODY_BYTES:
        return None
    try:
        body = SearchBody.model_validate(json.loads(raw))
    except (ValueError, ValidationError, RecursionError):
        return None
    out = []
    for item in body.results[:50]:
        try:
            out.append(Library.model_validate(item).as_dict())
        except ValidationError:
            continue
    if body.results and not out:
        return None  # results, but none usable: a malformed answer, not "not found"
    return out[:MAX_RESULTS]


def search_many(names: list[str], *, budget_s: float, query_for=None,
                want: int | None = None, request_timeout_s: float | None = None,
                on_answer=None, accept=None) -> SearchRun:
    """Search names in order until `want` are found (backfilling past failures), the
    list ends, the budget runs out, or a 429. The first request goes alone; when it
    gets through, the rest run MAX_CONCURRENCY at a time. Names must be checked
    (memhooks.names.valid_name) before they get here. `on_answer(name, status)` is
    called as each request starts (status None) and when its answer arrives.
    `accept(name, results)`: whether an answer counts towards `want` (a result that is
    not the library asked for does not; the answer is kept either way)."""
    run = SearchRun()
    if not names or budget_s <= 0:
        return run
    try:
        asyncio.run(_search_all(names, budget_s, query_for or (lambda n: n), want, run,
                                request_timeout_s, on_answer, accept))
    except Exception as exc:  # noqa: BLE001 - warming is best effort
        log_error(f"context7 search failed: {type(exc).__name__}")
        if run.fault is None and not run.answers:
            run.fault, run.fault_detail = "unreachable", type(exc).__name__
    return run


async def _search_all(names, budget_s, query_for, want, run: SearchRun, request_timeout_s,
                      on_answer=None, accept=None) -> None:
    start = time.monotonic()
    # requests must end (and be recorded) before the overall deadline cuts them off
    deadline = start + max(0.05, budget_s - GRACE_S)
    hard_deadline = start + budget_s
    per_request = request_timeout_s or budget_s
    headers = {"Accept": "application/json", "User-Agent": "memhooks"}
    key = os.environ.get("CONTEXT7_API_KEY", "").strip()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    base = context7_api_url()
    stop = asyncio.Event()
    queue = list(names)
    in_flight: set[str] = set()
    found = 0

    def tell(name, status):
        if on_answer is not None:
            try:
                on_answer(name, status)
            except Exception:  # noqa: BLE001 - a progress display never stops the search
                pass

    async def one(client, name):
        tell(name, None)
        try:
            await ask(client, name)
        finally:
            answer = run.answers.get(name)
            tell(name, answer.status if answer is not None else "timeout")

    async def ask(client, name):
        nonlocal found
        remaining = min(per_request, deadline - time.monotonic())
        if remaining <= 0.01:
            return
        in_flight.add(name)
        run.requests += 1
        try:
            resp = await client.get(f"{base}/v2/libs/search",
                                    params={"libraryName": name, "query": query_for(name)},
                                    timeout=httpx.Timeout(remaining))
            raw = await resp.aread() if resp.status_code == 200 else b""
        except (TimeoutError, httpx.TimeoutException):
            run.answers[name] = SearchAnswer(name, "timeout", detail="no answer in time")
            return
        except httpx.HTTPError as exc:
            run.answers[name] = SearchAnswer(name, "error", detail=type(exc).__name__)
            return
        finally:
            in_flight.discard(name)
        run.budget = newer(run.budget, from_response(resp.status_code, resp.headers))
        if resp.status_code == 429:
            run.retry_after_s = parse_retry_after(resp.headers.get("Retry-After"))
            run.answers[name] = SearchAnswer(name, "rate-limited", detail="HTTP 429")
            stop.set()
            return
        if resp.status_code == 404:
            run.answers[name] = SearchAnswer(name, "not-found")
            return
        if resp.status_code != 200:
            run.answers[name] = SearchAnswer(name, "error", detail=f"HTTP {resp.status_code}")
            return
        results = parse_results(raw)
        if results is None:
            run.answers[name] = SearchAnswer(name, "error", detail="malformed answer")
        elif results:
            run.answers[name] = SearchAnswer(name, "found", results)
            if accept is None or accept(name, results):
                found += 1
        else:
            run.answers[name] = SearchAnswer(name, "not-found")

    async def worker(client):
        # A name is taken only while the answers found plus the requests still in flight fall
        # short of `want`: the cap bounds the requests made, not only the answers counted (a
        # request that finds nothing frees its slot for the next name: the backfill).
        while queue and not stop.is_set() and (want is None or found + len(in_flight) < want):
            if deadline - time.monotonic() <= 0.01:
                return
            await one(client, queue.pop(0))

    async def run_all(client):
        # One request alone first: a 429 or an unusable API then costs the tiny
        # anonymous pool one request, not MAX_CONCURRENCY of them.
        first = queue[0]
        await one(client, queue.pop(0))
        answer = run.answers.get(first)
        if answer is None and run.requests == 0:
            return  # no time left to ask at all
        fault = _fault_of(answer)
        if fault is not None:
            run.fault, run.fault_detail = fault, answer.detail if answer else ""
            return
        tasks = [asyncio.create_task(worker(client))
                 for _ in range(min(MAX_CONCURRENCY, len(queue)))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    limits = httpx.Limits(max_connections=MAX_CONCURRENCY, max_keepalive_connections=MAX_CONCURRENCY)
    async with httpx.AsyncClient(headers=headers, follow_redirects=False, limits=limits) as client:
        main = asyncio.create_task(run_all(client))
        stopper = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait([main, stopper], timeout=max(0.0, hard_deadline - time.monotonic()),
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (main, stopper):
                t.cancel()
            await asyncio.gather(main, stopper, return_exceptions=True)
    # Anything still in flight when the deadline struck got no answer: a timeout, recorded.
    for name in list(in_flight):
        run.answers.setdefault(name, SearchAnswer(name, "timeout", detail="no answer in time"))
    if run.fault is None and run.retry_after_s is None and run.requests:
        first = names[0]
        fault = _fault_of(run.answers.get(first))
        if fault is not None and all(_fault_of(a) for a in run.answers.values()):
            run.fault, run.fault_detail = fault, run.answers[first].detail
    if run.retry_after_s is not None:
        run.fault, run.fault_detail = "rate-limited", "HTTP 429"


def _fault_of(answer: SearchAnswer | None) -> Fault | None:
    """Whether one answer says the API is not usable now (for the first request)."""
    if answer is None:
        return "timeout"  # the first request never came back
    if answer.status == "timeout":
        return "timeout"
    if answer.status == "rate-limited":
        return "rate-limited"
    if answer.status != "error":
        return None
    if answer.detail in UNREACHABLE or answer.detail in ("ConnectError", "RemoteProtocolError",
                                                         "ReadError", "WriteError", "NetworkError"):
        return "unreachable"
    if answer.detail.startswith("HTTP 5"):
        return "server-error"
    if answer.detail.startswith(("HTTP 2", "HTTP 3")):
        return None  # 202 "not finalised yet", a redirect: about this library, not the API
    if answer.detail == "malformed answer" or answer.detail.startswith("HTTP "):
        return "bad-answer"
    return "unreachable"


def request_headers(user_agent: str = "memhooks") -> dict[str, str]:
    """The headers of a search request: JSON, and the API key when CONTEXT7_API_KEY is set."""
    headers = {"Accept": "application/json", "User-Agent": user_agent}
    key = os.environ.get("CONTEXT7_API_KEY", "").strip()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


@dataclass
class Probe:
    """What one search request got, for `memhooks doctor`."""

    status_code: int | None = None  # None: no answer at all (`error` says why)
    results: int | None = None  # results in a 200 answer; None when it is not the search JSON
    ms: float = 0.0
    error: str = ""


def probe(name: str = "react", *, timeout_s: float = 5.0, max_bytes: int = 1024 * 1024,
          user_agent: str = "memhooks-doctor") -> Probe:
    """One search request for `name`, synchronously, with the same headers as warming."""
    start = time.monotonic()
    try:
        with httpx.Client(headers=request_headers(user_agent), follow_redirects=True,
                          timeout=timeout_s) as client, \
                client.stream("GET", f"{context7_api_url()}/v2/libs/search",
                              params={"libraryName": name, "query": name}) as resp:
            raw = b""
            if resp.status_code < 400:
                for chunk in resp.iter_bytes():
                    raw += chunk
                    if len(raw) >= max_bytes:
                        raw = raw[:max_bytes]
                        break
    except Exception as exc:  # noqa: BLE001 - a diagnosis: no connection, a timeout, TLS, a bad URL alike
        return Probe(error=str(exc) or type(exc).__name__)
    answer = Probe(status_code=resp.status_code, ms=(time.monotonic() - start) * 1000)
    if resp.status_code < 400:
        try:
            answer.results = len(SearchBody.model_validate(json.loads(raw)).results)
        except (ValueError, ValidationError, RecursionError):
            answer.results = None
    return answer
