"""`memhooks search`, `show`, `stats` and `mcp`: thin click commands over
memhooks.recall.search, memhooks.recall.stats and memhooks.entry.mcp."""

from __future__ import annotations

import os
import sys

import click
from rich.console import Console

from memhooks.cli._common import Fail, echo_json, no_store, open_store, store_exists
from memhooks.cli._people import document_text, page, results_text
from memhooks.config import db_path, project_dir
from memhooks.entry.mcp import main as mcp_main
from memhooks.recall import render, search, stats, stats_render, stats_summary
from memhooks.store.stats_queries import reads_by_document
from memhooks.team.search import TeamError
from memhooks.team.search import search as team_search
from memhooks.termtext import is_terminal, width


def register(main: click.Group) -> None:
    for cmd in (search_cmd, show_cmd, stats_cmd, mcp_cmd):
        main.add_command(cmd)


def _store(as_json: bool = False, json_extra: dict | None = None, *, create: bool = False):
    """Open the store for reading; without one, say so and exit (nothing is created), unless
    `create` (a team search keeps its hits locally)."""
    if not create and not store_exists():
        no_store(as_json, json_extra)
    return open_store(ingest=True)


def _for_people(people: bool | None) -> bool:
    """--snippets (True) or --fenced (False) as given; neither: the people's view when stdout
    is a terminal, the fenced one in a pipe, a file or an agent's shell."""
    return people if people is not None else is_terminal()


VIEW_HELP = ("--snippets: the view for people (the default when stdout is a terminal). "
             "--fenced: the agent-facing text, each stored text inside the reference-only "
             "fence with the note that explains it (the default in a pipe).")


@click.command("search")
@click.argument("query")
@click.option("--limit", "-n", type=click.IntRange(1, 100), default=10, show_default=True,
              help="How many results, 1 to 100 (the MCP tool takes the same bounds).")
@click.option("--full", is_flag=True, help="Each hit's whole text instead of a snippet.")
@click.option("--snippets/--fenced", "people", default=None, help=VIEW_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--team", "team", is_flag=True, help="Search the team store (PostgreSQL) instead.")
@click.option("--library", "-l", default=None, metavar="NAME",
              help="Only this library's documents: a name (as lookup_library knows it) or a "
                   "Context7 ID such as /simonw/sqlite-utils.")
def search_cmd(query, limit, full, people, as_json, team, library):
    """Search every cached document (BM25, titles weighted above bodies).

    Any text is a valid QUERY. Each result counts as one access.

    \b
    At a terminal: ranked hits, each with its title, library, URL, age and a
    few lines of snippet, wrapped to the terminal's width (--full: whole texts;
    long output goes through the pager). In a pipe (scripts, agents): the
    agent-facing form, every stored text inside the reference-only fence.
    --snippets / --fenced choose either one; --json is the same everywhere."""
    conn = _store(as_json, {"query": query, "count": 0, "results": []}, create=team)
    bodies = None
    try:
        if team:
            try:
                results = team_search(conn, query, limit)
            except TeamError as exc:
                raise Fail(f"team search: {exc}") from None
        else:
            if library and not search.resolve_library(conn, library, project_dir()):
                raise Fail(f"no known library {render.one_line(library, 80)}: give a Context7 ID "
                           "(/owner/repo) or a name `memhooks lookup` knows")
            results = search.search_documents(conn, query, limit, origin="user", library=library,
                                              project=project_dir())
            reads = reads_by_document(conn, [r["id"] for r in results])
            results = [{**r, "agent_reads": reads.get(r["id"], (0, 0))[0],
                        "user_reads": reads.get(r["id"], (0, 0))[1]} for r in results]
        if full:  # the whole texts, not counted again (the search counted each hit)
            docs = [search.get_document(conn, r["id"], 0, touch=False) for r in results]
            bodies = {d["id"]: d["content"] for d in docs if d is not None}
    finally:
        conn.close()
    if as_json:
        if bodies is not None:
            results = [{**r, "content": bodies.get(r["id"])} for r in results]
        echo_json("search", {"query": query, "count": len(results),
                   "results": [render.fenced(r) for r in results]})
        return
    if _for_people(people):
        page(results_text(query, results, width=width(), bodies=bodies))
        return
    if bodies is not None:
        results = [{**r, "snippet": bodies.get(r["id"], r.get("snippet"))} for r in results]
    click.echo(render.results_markdown(query, results, person=True))


@click.command("show")
@click.argument("doc_id", metavar="ID")
@click.option("--max-chars", type=int, default=20_000, show_default=True,
              help="Cut the text after this many characters (0 = everything).")
@click.option("--snippets/--fenced", "people", default=None,
              help="--snippets (the default at a terminal): the text for people, paged when "
                   "longer than the screen. --fenced (the default in a pipe): the agent-facing "
                   "form inside the reference-only fence.")
@click.option("--json", "as_json", is_flag=True, help="Print the document as JSON.")
@click.option("--section", default=None, metavar="SECTION",
              help="Only this section: its id (from `memhooks search`) or its URL anchor.")
def show_cmd(doc_id, max_chars, people, as_json, section):
    """Print one cached document by ID (counts one access).

    At a terminal the text is wrapped to its width and a long document goes through the
    pager ($PAGER, else less); in a pipe it is printed whole, inside the reference-only
    fence."""
    conn = _store(as_json, {"id": doc_id})
    try:
        doc = search.get_document(conn, doc_id, max_chars, origin="user", section=section)
    finally:
        conn.close()
    if doc is None and section:
        raise Fail(f"no section {render.one_line(section, 80)} in document {render.one_line(doc_id, 40)}")
    if doc is None:
        raise Fail(f"no document with id {render.one_line(doc_id, 40)}")
    if as_json:
        echo_json("show", render.fenced(doc))
        return
    if _for_people(people):
        page(document_text(doc, width=width()))
        return
    click.echo(render.document_markdown(doc))


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Stable keys for scripts (docs/stats-json.md).")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE", help="Also write the figures and charts as one self-contained page.")
@click.option("--project", type=click.Path(file_okay=False),
              help="Only this project's captures, documents, tier1 entries, counters and events.")
@click.option("--full", is_flag=True,
              help="Every table (the default in a pipe); at a terminal the headline fits one "
                   "screen and --full goes through the pager.")
def stats_cmd(as_json, html_file, project, full):
    """Documents, captures and dedup, agent reads, a 30-day chart, cache hits, events.

    At a terminal: a headline that fits one screen (served calls, agent reads, documents,
    cache, events, the last 30 days); --full prints every table, through the pager when
    longer than the screen. In a pipe: every table."""
    if project is not None and not os.path.isdir(project):
        raise Fail(f"--project {project}: no such folder (a project is named by its folder)")
    conn = _store(as_json)
    try:
        data = stats.gather(conn, db_path(), project=os.path.realpath(project) if project else None)
    finally:
        conn.close()
    if html_file:
        try:
            tmp = f"{html_file}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fchmod(fd, 0o600)  # private like the store, whatever the umask or an old tmp
            with open(fd, "w", encoding="utf-8") as fh:
                fh.write(stats_render.render_html(data))
            os.replace(tmp, html_file)
        except OSError as exc:
            raise Fail(f"cannot write {html_file}: {exc.strerror or exc}") from None
    if as_json:
        echo_json("stats", data)
    else:
        if is_terminal() and not full:
            click.echo("\n".join(stats_summary.summary_lines(data)))
        elif is_terminal():
            page(_rendered(data))
        else:
            stats_render.render(data)
        if html_file:
            click.echo(f"wrote {html_file} (readable by you only)")


def _rendered(data: dict) -> str:
    """Every table of `memhooks stats` as text (with the terminal's colours) for the pager."""
    console = Console(width=width())
    with console.capture() as captured:
        stats_render.render(data, console)
    return captured.get()


@click.command("mcp")
def mcp_cmd():
    """Serve the recall tools over stdio (MCP): search_documents, get_document, lookup_library."""
    sys.exit(mcp_main([]))
