"""`memhooks cache lookup|lookup-docs|write`: the tier1 and tier2 cache from the command line
(the same answers as the stdlib-only lc-cache-* entry points)."""

from __future__ import annotations

import os
import sys
from contextlib import closing

import click

from memhooks.cli._common import Fail, echo_json, no_store, open_store, store_exists
from memhooks.config import project_dir
from memhooks.egress import fence, safe_json
from memhooks.ingest.pipeline import ingest_pending
from memhooks.names import checked_library_id
from memhooks.recall.lc_cache import lookup
from memhooks.recall.lc_write import parse_write_args, write
from memhooks.recall.lookup_docs import lookup_covered_docs


def register(main: click.Group) -> None:
    main.add_command(cache)


@click.group()
def cache():
    """Read and write the tier1 (name → ID) and tier2 (ID, topic → docs) cache."""


def _project(project: str | None) -> str:
    return os.path.realpath(project) if project else project_dir()


@cache.command("lookup")
@click.argument("name")
@click.option("--project", type=click.Path(file_okay=False), help="Project directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole entry as JSON.")
def cache_lookup(name, project, as_json):
    """Print the Context7 library ID for NAME; exit 1 on a miss."""
    if not store_exists():
        no_store(as_json, {"name": name, "hit": False})
    with closing(open_store()) as conn:
        hit = lookup(conn, name, _project(project), on_pending=lambda: ingest_pending(conn))
    if not hit:
        if as_json:
            echo_json("cache lookup", {"name": name, "hit": False})
        sys.exit(1)

    library_id = checked_library_id(hit["library_id"])  # egress: printed only in its grammar
    if library_id is None:
        if as_json:
            echo_json("cache lookup", {"name": name, "hit": False})
        sys.exit(1)
    if as_json:
        echo_json("cache lookup", {**safe_json(hit), "library_id": library_id, "hit": True})
    else:
        click.echo(library_id)


@cache.command("lookup-docs")
@click.argument("library_id")
@click.argument("topic")
@click.option("--json", "as_json", is_flag=True, help="Print JSON with the body and its document id.")
def cache_lookup_docs(library_id, topic, as_json):
    """Print the cached docs for LIBRARY_ID and TOPIC; exit 1 on a miss."""
    key = {"library_id": library_id, "topic": topic}
    if not store_exists():
        no_store(as_json, {**key, "hit": False})
    with closing(open_store()) as conn:
        hit = lookup_covered_docs(conn, library_id, topic, _project(None))
    if not hit:
        if as_json:
            echo_json("cache lookup-docs", {**key, "hit": False})
        sys.exit(1)

    body = fence(hit[1])  # egress: fenced with a fresh marker, as lc-cache-lookup-docs prints it
    if as_json:
        echo_json("cache lookup-docs", {**key, "hit": True, "document_id": hit[0], "content": body})
    else:
        sys.stdout.write(body)


@cache.command("write")
@click.argument("tier", type=click.Choice(["tier1", "tier2"]))
@click.argument("args", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def cache_write(tier, args, as_json):
    """tier1 NAME LIBRARY_ID, or tier2 LIBRARY_ID TOPIC FILE."""
    need = {"tier1": "NAME LIBRARY_ID", "tier2": "LIBRARY_ID TOPIC FILE"}[tier]
    if len(args) != len(need.split()):
        raise Fail(f"cache write {tier} takes {need}")
    if tier == "tier2" and not os.path.isfile(args[2]):
        raise Fail(f"no such file: {args[2]}")
    record = parse_write_args([tier, *args])
    if record is None:
        raise Fail("nothing to write (empty name, ID or body)")
    with closing(open_store(ingest=False)) as conn:
        event_id = write(conn, record, _project(None))
    if as_json:
        echo_json("cache write", {"written": True, "tier": tier, "event_id": event_id})
