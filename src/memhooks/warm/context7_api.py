"""Context7 HTTP API client for warming: concurrent searches inside one budget.

`GET {CONTEXT7_API_URL}/v2/libs/search?libraryName=…&query=…`, with
`Authorization: Bearer $CONTEXT7_API_KEY` when set (the key is never logged or
stored). A 429 stops every request at once and reports Retry-After.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field

from memhooks.config import context7_api_url

MAX_CONCURRENCY = 8
DEFAULT_RETRY_AFTER_S = 600.0
UNREACHABLE = ("ConnectError", "ConnectTimeout", "ProxyError", "UnsupportedProtocol")


@dataclass
class SearchAnswer:
    name: str
    status: str  # "found" | "not-found" | "rate-limited" | "error" | "timeout"
    results: list[dict] = field(default_factory=list)
    detail: str = ""


@dataclass
class SearchRun:
    answers: dict[str, SearchAnswer] = field(default_factory=dict)
    retry_after_s: float | None = None  # set when the API said 429
    unreachable: bool = False  # the first request could not connect or timed out


def parse_retry_after(value: str | None) -> float:
    if not value:
        return DEFAULT_RETRY_AFTER_S
    value = value.strip()
    try:
        return max(1.0, float(value))
    except ValueError:
        pass
    try:
        from email.utils import parsedate_to_datetime

        return max(1.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return DEFAULT_RETRY_AFTER_S


def _results(body) -> list[dict] | None:
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        return None
    out = [r for r in body["results"]
           if isinstance(r, dict) and isinstance(r.get("id"), str) and r["id"].startswith("/")]
    if body["results"] and not out:
        return None  # results, but none usable: a malformed answer, not "not found"
    return out


def search_many(names: list[str], *, budget_s: float, query_for=None,
                want: int | None = None, on_answer=None) -> SearchRun:
    """Search names in order until `want` are found (backfilling past failures), the
    list ends, the budget runs out, or a 429. The first request goes alone; when it
    gets through, the rest run MAX_CONCURRENCY at a time. `on_answer(name, status)` is
    called as each request starts (status None) and when its answer arrives."""
    run = SearchRun()
    if not names or budget_s <= 0:
        return run
    try:
        asyncio.run(_search_all(names, budget_s, query_for or (lambda n: n), want, run, on_answer))
    except Exception as exc:  # noqa: BLE001 - warming is best effort
        from memhooks.log import log_error

        log_error(f"context7 search failed: {type(exc).__name__}: {exc}")
    return run


async def _search_all(names, budget_s, query_for, want, run: SearchRun, on_answer=None) -> None:
    import httpx

    deadline = time.monotonic() + budget_s
    headers = {"Accept": "application/json", "User-Agent": "memhooks"}
    key = os.environ.get("CONTEXT7_API_KEY", "").strip()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    base = context7_api_url()
    stop = asyncio.Event()
    queue = list(names)
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
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        try:
            resp = await client.get(f"{base}/v2/libs/search",
                                    params={"libraryName": name, "query": query_for(name)},
                                    timeout=httpx.Timeout(remaining))
        except (httpx.TimeoutException, asyncio.TimeoutError):
            run.answers[name] = SearchAnswer(name, "timeout")
            return
        except httpx.HTTPError as exc:
            run.answers[name] = SearchAnswer(name, "error", detail=type(exc).__name__)
            return
        if resp.status_code == 429:
            run.retry_after_s = parse_retry_after(resp.headers.get("Retry-After"))
            run.answers[name] = SearchAnswer(name, "rate-limited")
            stop.set()
            return
        if resp.status_code == 404:
            run.answers[name] = SearchAnswer(name, "not-found")
            return
        if resp.status_code != 200:
            run.answers[name] = SearchAnswer(name, "error", detail=f"HTTP {resp.status_code}")
            return
        try:
            results = _results(resp.json())
        except ValueError:
            results = None
        if results is None:
            run.answers[name] = SearchAnswer(name, "error", detail="malformed answer")
        elif results:
            run.answers[name] = SearchAnswer(name, "found", results)
            found += 1
        else:
            run.answers[name] = SearchAnswer(name, "not-found")

    async def worker(client):
        while queue and not stop.is_set() and (want is None or found < want):
            await one(client, queue.pop(0))

    async def run_all(client):
        # One request alone first: a 429 or an unreachable API then costs the tiny
        # anonymous pool one request, not MAX_CONCURRENCY of them.
        first = queue[0]
        await one(client, queue.pop(0))
        answer = run.answers.get(first)
        if answer is not None and (answer.status == "timeout" or answer.detail in UNREACHABLE):
            run.unreachable = True
            return
        tasks = [asyncio.create_task(worker(client))
                 for _ in range(min(MAX_CONCURRENCY, len(queue)))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async with httpx.AsyncClient(headers=headers, follow_redirects=False) as client:
        main = asyncio.create_task(run_all(client))
        stopper = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait([main, stopper], timeout=max(0.0, deadline - time.monotonic()),
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (main, stopper):
                t.cancel()
            await asyncio.gather(main, stopper, return_exceptions=True)
