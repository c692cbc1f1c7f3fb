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


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memhooks")
def main():
    """memhooks: capture, warm and recall the library docs your coding agent looks up."""


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
    from memhooks.recall.lc_cache import lookup
    from memhooks.ingest.pipeline import ingest_pending

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
    from memhooks.recall.lc_cache import lookup_docs

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
@click.option("--json", "as_json", is_flag=True)
def scan(directory, top_n, as_json):
    """List the project's ranked libraries from its lockfiles and manifests."""
    from memhooks.config import top_n as default_top
    from memhooks.warm.rank import rank
    from memhooks.warm.scan import scan_project

    result = scan_project(os.path.realpath(directory))
    ranked = rank(result.deps, top_n=top_n or default_top())
    if as_json:
        echo_json({"project": os.path.realpath(directory), "files": result.files,
                   "errors": result.errors,
                   "libraries": [{"name": d.name, "ecosystem": d.ecosystem, "version": d.version,
                                  "kind": d.kind, "manifests": d.manifests} for d in ranked]})
        return
    for i, d in enumerate(ranked, 1):
        click.echo(f"{i:3d}. {d.name}@{d.version or '-'}  [{d.ecosystem}, {d.kind}]")
    if not ranked:
        click.echo("no dependencies found", err=True)
    for err in result.errors:
        click.echo(f"skipped: {err}", err=True)


@main.command()
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--budget", type=float, default=None, help="Seconds for Context7 API requests.")
@click.option("--top", "top_n", type=int, default=None)
@click.option("--json", "as_json", is_flag=True)
def warm(directory, budget, top_n, as_json):
    """Pre-resolve the project's top libraries to Context7 IDs (tier1)."""
    from memhooks import config
    from memhooks.warm.resolve import warm as do_warm

    project = os.path.realpath(directory)
    conn = open_store()
    try:
        if as_json:
            result = do_warm(conn, project, budget_s=budget, top_n=top_n, retry_unreachable=True)
        else:
            from rich.console import Console

            with Console(stderr=True).status(f"scanning {project} …") as status:
                def progress(r):
                    status.update(f"ranked {r.name} ({r.how}) …")

                result = do_warm(conn, project, budget_s=budget, top_n=top_n, progress=progress,
                                 retry_unreachable=True)
    finally:
        conn.close()
    rows = [{"name": r.name, "ecosystem": r.ecosystem, "version": r.version,
             "library_id": r.library_id, "versioned_id": r.versioned_id, "how": r.how}
            for r in result.entries]
    if as_json:
        echo_json({"project": project, "entries": rows, "files": result.scanned_files,
                   "api_requests": result.api_requests, "rate_limited": result.rate_limited,
                   "api_unreachable": result.unreachable,
                   "seconds": round(result.seconds, 3), "errors": result.errors})
        return
    for r in rows:
        target = r["library_id"] or f"({r['how']})"
        click.echo(f"{r['name']}@{r['version'] or '-'} → {target}  [{r['how']}]")
    click.echo(f"{len(result.resolved)}/{len(rows)} resolved from {len(result.scanned_files)} "
               f"files in {result.seconds:.2f}s ({result.api_requests} API requests"
               f"{', rate limited' if result.rate_limited else ''}"
               f"{', API unreachable: ' + config.context7_api_url() if result.unreachable else ''})")


def _register_commands() -> None:
    """Commands that live in their own modules (recall; export/import; install and doctor)."""
    from memhooks.cli import exchange as cli_exchange
    from memhooks.cli import install as cli_install
    from memhooks.cli import recall as cli_recall

    cli_recall.register(main)
    cli_exchange.register(main)
    cli_install.register(main)
    __import__("memhooks.cli.team", fromlist=["register"]).register(main)


_register_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
