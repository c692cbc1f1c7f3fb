"""The `memhooks` command line: thin click commands over the modules that hold the logic."""

from __future__ import annotations

import os
import sys

import click

from memhooks import __version__
from memhooks.cli._common import Fail, echo_json, open_store  # noqa: F401 - re-exported


class OneLineErrors(click.Group):
    """Usage errors in one line (`memhooks: …; see 'memhooks CMD --help'`), exit 2."""

    def main(self, *args, **kwargs):
        try:
            kwargs.pop("standalone_mode", None)
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Abort:
            click.echo("memhooks: aborted", err=True)
            sys.exit(1)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "memhooks"
            click.echo(f"memhooks: {exc.format_message()} (see '{where} --help')", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except Exception as exc:  # noqa: BLE001 - a damaged store: one clear line, no traceback
            import sqlite3

            if not isinstance(exc, sqlite3.DatabaseError):
                raise
            from memhooks.cli._common import store_error_line

            click.echo(store_error_line(exc), err=True)
            sys.exit(1)


SHORT_USAGE = """memhooks keeps the library docs your coding agent looks up.

usage: memhooks COMMAND [ARGS]...

get started
  install             register the hooks and MCP server with Claude Code
  import-transcripts  backfill the store from your past Claude Code sessions
  warm                pre-resolve this project's libraries to Context7 IDs

look
  stats               what is stored and how the agent uses it (--html FILE)
  search QUERY        search every cached document
  show ID             print one document
  doctor              check the store, the hooks, the Python, the Context7 API

`memhooks --help` lists every command; `memhooks COMMAND --help` explains one."""


@click.group(cls=OneLineErrors, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memhooks")
@click.pass_context
def main(ctx):
    """memhooks: capture, warm and recall the library docs your coding agent looks up."""
    if ctx.invoked_subcommand is None:
        click.echo(SHORT_USAGE)


# ----------------------------------------------------------------------------- hooks

@main.group()
def hook():
    """Run a hook (reads the hook JSON on stdin; always exits 0)."""


@hook.command("post-tool-use")
def hook_post_tool_use():
    from memhooks.capture.hooks import post_tool_use

    sys.exit(post_tool_use())


@hook.command("session-start")
def hook_session_start():
    from memhooks.capture.hooks import session_start

    sys.exit(session_start())


# ----------------------------------------------------------------------------- journal

@main.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
def replay(file):
    """Feed recorded hook payloads (JSON Lines) through the capture path."""
    from memhooks.capture.replay import replay_file

    try:
        report = replay_file(file)
    except OSError as exc:
        raise Fail(f"cannot read {file}: {exc.strerror or exc}") from None
    click.echo(f"replayed {report['events']} events: {report['done']} captured, "
               f"{report['skipped']} skipped, {report['failed']} failed; "
               f"{report['documents_created']} new documents")


@main.command()
def reindex():
    """Rebuild every projection from the journal."""
    from memhooks.config import db_path
    from memhooks.ingest.pipeline import reindex as do_reindex

    conn = open_store(ingest=False)
    try:
        report = do_reindex(conn, db_path())
    finally:
        conn.close()
    click.echo(f"reindexed: {report.done} captured, {report.skipped} skipped, "
               f"{report.failed} failed; {report.documents_created} documents")


@main.command()
def ingest():
    """Project pending journal events now."""
    conn = open_store(ingest=False)
    try:
        from memhooks.config import db_path
        from memhooks.ingest.pipeline import ingest_pending

        report = ingest_pending(conn, db_path())
    finally:
        conn.close()
    click.echo(f"ingested: {report.done} captured, {report.skipped} skipped, {report.failed} failed")


# ----------------------------------------------------------------------------- cache

@main.group()
def cache():
    """Read and write the tier1 (name → ID) and tier2 (ID, topic → docs) cache."""


def _project(project: str | None) -> str:
    from memhooks.config import project_dir

    return os.path.realpath(project) if project else project_dir()


@cache.command("lookup")
@click.argument("name")
@click.option("--project", type=click.Path(file_okay=False), help="Project directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole entry as JSON.")
def cache_lookup(name, project, as_json):
    """Print the Context7 library ID for NAME; exit 1 on a miss."""
    from memhooks.cli._common import no_store, store_exists
    from memhooks.ingest.pipeline import ingest_pending
    from memhooks.recall.lc_cache import lookup

    if not store_exists():
        no_store(as_json, {"name": name, "hit": False})
    conn = open_store()
    try:
        hit = lookup(conn, name, _project(project), on_pending=lambda: ingest_pending(conn))
    finally:
        conn.close()
    if not hit:
        if as_json:
            echo_json({"name": name, "hit": False})
        sys.exit(1)
    echo_json({**hit, "hit": True}) if as_json else click.echo(hit["library_id"])


@cache.command("lookup-docs")
@click.argument("library_id")
@click.argument("topic")
@click.option("--json", "as_json", is_flag=True, help="Print JSON with the body and its document id.")
def cache_lookup_docs(library_id, topic, as_json):
    """Print the cached docs for LIBRARY_ID and TOPIC; exit 1 on a miss."""
    from memhooks.cli._common import no_store, store_exists
    from memhooks.recall.lc_cache import lookup_docs

    if not store_exists():
        no_store(as_json, {"library_id": library_id, "topic": topic, "hit": False})
    conn = open_store()
    try:
        hit = lookup_docs(conn, library_id, topic, _project(None))
    finally:
        conn.close()
    if not hit:
        if as_json:
            echo_json({"library_id": library_id, "topic": topic, "hit": False})
        sys.exit(1)
    if as_json:
        echo_json({"library_id": library_id, "topic": topic, "hit": True,
                   "document_id": hit[0], "content": hit[1]})
    else:
        sys.stdout.write(hit[1])


@cache.command("write")
@click.argument("tier", type=click.Choice(["tier1", "tier2"]))
@click.argument("args", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def cache_write(tier, args, as_json):
    """tier1 NAME LIBRARY_ID, or tier2 LIBRARY_ID TOPIC FILE."""
    from memhooks.recall.lc_cache import parse_write_args, write

    need = {"tier1": "NAME LIBRARY_ID", "tier2": "LIBRARY_ID TOPIC FILE"}[tier]
    if len(args) != len(need.split()):
        raise Fail(f"cache write {tier} takes {need}")
    if tier == "tier2" and not os.path.isfile(args[2]):
        raise Fail(f"no such file: {args[2]}")
    record = parse_write_args([tier, *args])
    if record is None:
        raise Fail("nothing to write (empty name, ID or body)")
    conn = open_store(ingest=False)
    try:
        event_id = write(conn, record, _project(None))
    finally:
        conn.close()
    if as_json:
        echo_json({"written": True, "tier": tier, "event_id": event_id})


# ----------------------------------------------------------------------------- warm

@main.command()
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--top", "top_n", type=int, default=None, help="How many libraries (default 20).")
@click.option("--direct-only", is_flag=True, default=None,
              help="Direct dependencies only (also MEMHOOKS_DIRECT_ONLY=1).")
@click.option("--json", "as_json", is_flag=True)
def scan(directory, top_n, direct_only, as_json):
    """List the project's ranked libraries from its lockfiles and manifests."""
    from memhooks.config import top_n as default_top
    from memhooks.warm import settings
    from memhooks.warm.rank import candidates
    from memhooks.warm.scan import scan_project

    result = scan_project(os.path.realpath(directory))
    n = top_n or default_top()
    only = settings.direct_only() if direct_only is None else direct_only
    ranked = candidates(result.deps, n, backfill=n, direct_only=only)[:n]
    if as_json:
        echo_json({"project": os.path.realpath(directory), "files": result.files,
                   "errors": result.errors,
                   # what was left out: names/versions failing their grammar, files too large,
                   # unreadable, not regular, outside the project root, ...
                   "skipped": result.skipped,
                   "dropped": {"names": result.skipped.get("names-dropped", 0),
                               "versions": result.skipped.get("versions-dropped", 0)},
                   "complete": result.complete, "budget": result.budget,
                   "seconds": round(result.seconds, 3), "bytes_read": result.bytes_read,
                   "libraries": [{"name": d.name, "ecosystem": d.ecosystem, "version": d.version,
                                  "kind": d.kind, "manifests": d.manifests} for d in ranked]})
        return
    for i, d in enumerate(ranked, 1):
        click.echo(f"{i:3d}. {d.name}@{d.version or 'unpinned'}  [{d.ecosystem}, {d.kind}]")
    if not ranked:
        click.echo("no dependencies found", err=True)
    for err in result.errors:
        click.echo(f"skipped: {err}", err=True)
    if result.skipped:
        click.echo("left out: " + ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items())),
                   err=True)
    if not result.complete:
        click.echo(f"scan cut short by its {result.budget} budget; the next warm continues it",
                   err=True)


# What each warm outcome means, in one word or two (memhooks.warm.resolve.Resolved.how).
WARM_STATUS = {
    "tier1": "cached",
    "warm-local": "known",
    "warm-api": "resolved",
    "not-found": "not in Context7",
    "api-error": "API error",
    "api-timeout": "API timeout",
    "api-rate-limited": "rate limited",
    "unresolved": "not asked",
}
API_NEEDED = {"warm-api", "not-found", "api-error", "api-timeout", "api-rate-limited", "unresolved"}


def warm_rows(entries) -> list[str]:
    """One line per library: name@version (or unpinned), the library ID or -, a status word."""
    labels = [f"{r.name}@{r.version or 'unpinned'}" for r in entries]
    width = min(44, max((len(x) for x in labels), default=0))
    idw = min(40, max((len(r.library_id or "-") for r in entries), default=1))
    return [f"{label:<{width}}  {(r.library_id or '-'):<{idw}}  {WARM_STATUS.get(r.how, r.how)}"
            for label, r in zip(labels, entries, strict=True)]


@main.command()
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--budget", type=float, default=None, help="Seconds for Context7 API requests.")
@click.option("--top", "top_n", type=int, default=None)
@click.option("--direct-only", is_flag=True, default=None,
              help="Warm direct dependencies only (also MEMHOOKS_DIRECT_ONLY=1).")
@click.option("--json", "as_json", is_flag=True)
def warm(directory, budget, top_n, direct_only, as_json):
    """Pre-resolve the project's top libraries to Context7 IDs (tier1).

    Exits 1 when the Context7 API was needed and no library resolved."""
    from memhooks import config
    from memhooks.warm.resolve import warm as do_warm

    project = os.path.realpath(directory)
    conn = open_store()
    try:
        if as_json:
            result = do_warm(conn, project, budget_s=budget, top_n=top_n, retry_unreachable=True,
                             direct_only=direct_only)
        else:
            from rich.console import Console

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

                result = do_warm(conn, project, budget_s=budget, top_n=top_n, progress=progress,
                                 retry_unreachable=True, direct_only=direct_only,
                                 api_progress=api_progress)
    finally:
        conn.close()
    api_needed = any(r.how in API_NEEDED for r in result.entries)
    failed = api_needed and not result.resolved
    rows = [{"name": r.name, "ecosystem": r.ecosystem, "version": r.version,
             "library_id": r.library_id, "versioned_id": r.versioned_id, "how": r.how,
             "status": WARM_STATUS.get(r.how, r.how), "cause": r.cause}
            for r in result.entries]
    if as_json:
        echo_json({"project": project, "entries": rows, "files": result.scanned_files,
                   "api_requests": result.api_requests, "rate_limited": result.rate_limited,
                   "api_unreachable": result.unreachable, "api_needed": api_needed,
                   "api_fault": result.api_fault, "api_fault_detail": result.api_fault_detail,
                   "api_until": result.api_until, "scan_complete": result.scan_complete,
                   "scan_budget": result.scan_budget, "skipped": result.skipped,
                   "seconds": round(result.seconds, 3), "errors": result.errors})
        sys.exit(1 if failed else 0)
    for line, r in zip(warm_rows(result.entries), rows, strict=True):
        # One fault for the whole run is said once, below; other causes stand on their row.
        own = r["cause"] and not r["library_id"] and not result.api_fault
        click.echo(line + (f" — {r['cause']}" if own else ""))
    n_files = len(result.scanned_files)
    click.echo(f"{len(result.resolved)}/{len(rows)} resolved from {n_files} "
               f"file{'s' if n_files != 1 else ''} in {result.seconds:.2f}s "
               f"({result.api_requests} API request{'s' if result.api_requests != 1 else ''}"
               f"{', rate limited' if result.rate_limited else ''}"
               f"{', API unreachable: ' + config.context7_api_url() if result.unreachable else ''})")
    if result.api_fault:
        from memhooks.warm.resolve import _fault_words, _until_words

        fault = result.api_fault.removeprefix("backoff:")
        click.echo(f"Context7: {_fault_words(fault, result.api_fault_detail)}"
                   f"{_until_words(result.api_until)}"
                   f"{' (from an earlier session)' if result.api_fault.startswith('backoff:') else ''}")
    if not rows:
        click.echo("no dependencies found (no lockfile or manifest memhooks reads)", err=True)
    if failed:
        click.echo("memhooks: nothing resolved: the Context7 API was needed"
                   + (" and is unreachable" if result.unreachable else
                      " and rate-limited this machine" if result.rate_limited else "")
                   + "; run `memhooks warm` again later", err=True)
        sys.exit(1)


def _register_commands() -> None:
    """Commands that live in their own modules (recall; export/import; install and doctor)."""
    from memhooks.cli import exchange as cli_exchange
    from memhooks.cli import install as cli_install
    from memhooks.cli import recall as cli_recall
    from memhooks.cli import transcripts as cli_transcripts

    cli_recall.register(main)
    cli_transcripts.register(main)
    cli_exchange.register(main)
    cli_install.register(main)
    __import__("memhooks.cli.team", fromlist=["register"]).register(main)


_register_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
