"""`memhooks add`, `memhooks refresh` and `memhooks sources`: thin click commands over
memhooks.ingest.sources (fetching, limits, robots.txt) and memhooks.store.sources (the rows)."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memhooks.cli._common import Fail, echo_json, echo_lines, no_store, open_store, store_exists
from memhooks.config_file import parse_duration
from memhooks.egress import one_line, safe_json
from memhooks.ingest.fetch import Limits
from memhooks.ingest.sources import SourceError, add, refresh
from memhooks.store.sources import summary
from memhooks.termtext import human_bytes
from memhooks.timefmt import iso


def register(main: click.Group) -> None:
    for cmd in (add_cmd, refresh_cmd, sources_cmd):
        main.add_command(cmd)


def _duration(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@contextmanager
def _progress():
    """A progress bar on stderr while pages are fetched, only when stderr is a terminal;
    yields the callback (done, total or None, url or None) or None."""
    if not sys.stderr.isatty():
        yield None
        return


    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("fetching", total=None)

        def update(done: int, total: int | None, url: str | None) -> None:
            if total is not None:
                bar.update(task, total=total)
            bar.update(task, completed=done, description=one_line(url, 60) if url else "fetching")

        yield update


def run_lines(run: dict) -> list[str]:
    """A run of `add` or `refresh` for people."""
    o = run["outcomes"]
    stored = o.get("new", 0) + o.get("updated", 0)
    lines = []
    if run["command"] == "add":
        root = one_line(run["roots"][0], 300) if run["roots"] else "?"
        lines.append(f"added {root}: {run['visited']} pages visited, {o.get('new', 0)} new, "
                     f"{o.get('updated', 0)} updated, {o.get('unchanged', 0) + o.get('not-modified', 0)} unchanged")
    else:
        lines.append(f"refreshed {len(run['roots'])} sources: {run['visited']} pages checked, "
                     f"{o.get('not-modified', 0)} not modified (304), {o.get('unchanged', 0)} same text, "
                     f"{o.get('updated', 0)} updated, {o.get('new', 0)} new")
    lines.append(f"downloaded {human_bytes(run['bytes_downloaded'])} in {run['requests']} requests, "
                 f"{run['seconds']:.1f} s; stored {stored} documents ({human_bytes(run['bytes_stored'])})")
    failed = [p for p in run["pages"] if p["outcome"] not in ("new", "updated", "unchanged", "not-modified")]
    if failed:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(
            (k, v) for k, v in o.items() if k not in ("new", "updated", "unchanged", "not-modified")))
        lines.append(f"not stored: {counts}")
        for p in failed[:5]:
            lines.append(f"  {one_line(p['url'], 200)}: {one_line(p['reason'] or p['outcome'], 200)}")
        if len(failed) > 5:
            lines.append(f"  … and {len(failed) - 5} more (--json lists them)")
    if run["skipped"]:
        lines.append("links not visited: " + ", ".join(f"{k} {v}" for k, v in sorted(run["skipped"].items())))
    hints = {"pages": f"pages ({run['limits']['pages']}; --max-pages or MEMHOOKS_ADD_MAX_PAGES)",
             "bytes": f"bytes ({human_bytes(run['limits']['total_bytes'])}; MEMHOOKS_ADD_MAX_BYTES)",
             "time": f"time ({run['limits']['budget_s']:g} s; MEMHOOKS_ADD_BUDGET_S)"}
    if run["limits_hit"]:
        lines.append("limits reached: " + ", ".join(hints.get(k, k) for k in run["limits_hit"])
                     + "; run it again to go on")
    return lines


def _fetching(run_fn, max_pages, *args, **kwargs) -> dict:
    """Run `add` or `refresh` over the store with the configured limits and a progress bar;
    its summary, or a one-line failure."""
    conn = open_store(ingest=False)
    try:
        with _progress() as progress:
            run = run_fn(conn, *args, limits=Limits.from_config(pages=max_pages), progress=progress, **kwargs)
    except SourceError as exc:
        raise Fail(str(exc)) from None
    finally:
        conn.close()
    return run.as_dict()


@click.command("add")
@click.argument("url")
@click.option("--library", "library_id", metavar="ID",
              help="The library these docs are about, as a library ID (/owner/repo).")
@click.option("--version", "version", metavar="V", help="The library version they describe.")
@click.option("--max-pages", type=click.IntRange(1, 100_000), default=None,
              help="Pages to visit at most, the llms.txt included (default 200, MEMHOOKS_ADD_MAX_PAGES).")
@click.option("--json", "as_json", is_flag=True, help="Print what was fetched and stored as JSON.")
def add_cmd(url, library_id, version, max_pages, as_json):
    """Store an llms.txt and the pages it lists (same site only), or one page.

    Robots.txt is respected; limits: pages, bytes per page and in all, time
    (MEMHOOKS_ADD_* settings). `memhooks refresh` revalidates what was added."""
    data = _fetching(add, max_pages, url, library_id=library_id, version=version)
    if as_json:
        echo_json("add", data)
        return
    echo_lines(run_lines(data))


@click.command("refresh")
@click.argument("url", required=False)
@click.option("--all", "everything", is_flag=True, help="Every source added.")
@click.option("--older-than", "older_than", metavar="DUR", callback=_duration,
              help="Only pages last checked more than DUR ago (30m, 12h, 7d).")
@click.option("--max-pages", type=click.IntRange(1, 100_000), default=None,
              help="Pages to visit at most (default 200, MEMHOOKS_ADD_MAX_PAGES).")
@click.option("--json", "as_json", is_flag=True, help="Print what was checked and stored as JSON.")
def refresh_cmd(url, everything, older_than, max_pages, as_json):
    """Revalidate added sources (one URL, or --all): unchanged pages cost no body bytes
    (If-None-Match / If-Modified-Since), changed pages are stored anew."""
    if bool(url) == bool(everything):
        raise click.UsageError("give one source URL or --all")
    if not store_exists():
        no_store(as_json, {"command": "refresh"}, what=" and no source was added")

    data = _fetching(refresh, max_pages, url=url, older_than_s=older_than)
    if as_json:
        echo_json("refresh", data)
        return
    if not data["roots"]:
        click.echo("nothing to refresh" + (" (every page was checked more recently)" if older_than else
                                           ": 'memhooks add URL' adds a source"))
        return
    echo_lines(run_lines(data))


@click.command("sources")
@click.option("--json", "as_json", is_flag=True, help="Print the sources as JSON.")
def sources_cmd(as_json):
    """List the sources you added: URL, library, pages, bytes, last checked, status."""
    if not store_exists():
        no_store(as_json, {"count": 0, "sources": []}, what=" and no source was added")

    conn = open_store(ingest=False)
    try:
        rows = summary(conn)
    finally:
        conn.close()
    if as_json:
        echo_json("sources", {"count": len(rows), "sources": safe_json(rows, 4100)})
        return
    if not rows:
        click.echo("No sources added yet: 'memhooks add https://…/llms.txt' adds one.")
        return
    now = time.time()
    for r in rows:
        status = ", ".join(f"{k} {v}" for k, v in sorted(r["statuses"].items()))
        lib = one_line(r["library_id"], 100) if r["library_id"] else "-"
        if r["version"]:
            lib += f"@{one_line(r['version'], 40)}"
        ago = f"{_ago(now - r['last_checked'])} ago" if r["last_checked"] else "never"
        click.echo(f"{one_line(r['url'], 300)}")
        click.echo(f"  library {lib} · {r['pages']} pages · {r['documents']} stored · {human_bytes(r['bytes'])}"
                   f" · checked {ago} ({iso(r['last_checked']) or '-'}) · {status}")


def _ago(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{max(0, seconds):.0f}s"
