"""`memhooks import-transcripts`: backfill the store from past Claude Code sessions."""

from __future__ import annotations

import os
import re
import sys
import time

import click

from memhooks.capture.backfill import import_transcripts
from memhooks.capture.transcripts import parse_time, transcript_roots
from memhooks.cli import _render
from memhooks.cli._common import Fail, echo_json

OFFER = ("memhooks: to fill the store from your past Claude Code sessions, run "
         "`memhooks import-transcripts` (reads ~/.claude/projects; --dry-run to preview)")


def register(main: click.Group) -> None:
    main.add_command(import_transcripts_cmd)


def parse_since(text: str) -> float:
    """DATE (2026-01-31), an ISO time, or an age (30d, 12h, 2w) -> epoch seconds."""
    raw = text.strip()
    m = re.fullmatch(r"(\d{1,5})\s*([hdw])", raw, re.IGNORECASE)
    if m:
        unit = {"h": 3600, "d": 86400, "w": 7 * 86400}[m.group(2).lower()]
        return time.time() - int(m.group(1)) * unit
    at = parse_time(raw)
    if at is None:
        raise click.BadParameter(f"{text!r} is not a date (2026-01-31), an ISO time or an age (30d)")
    return at


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def summary_lines(r) -> list[str]:
    d = r.as_dict()
    tc, ev, docs, err = d["tool_calls"], d["events"], d["documents"], d["errors_skipped"]
    rate = f", {r.bytes_total / 1e6 / r.seconds:,.1f} MB/s" if r.seconds > 0 and r.bytes_total else ""
    head = "would import" if r.dry_run else "imported"
    lines = [f"{head} from {_plural(d['files'], 'transcript file')} "
             f"({_mb(d['bytes'])}, {_plural(d['sessions'], 'session')}) in {r.seconds:.1f}s{rate}"]
    failed = tc["failures"] - tc["denied"]
    extra = [f"{failed:,} failed" if failed else "",
             f"{tc['denied']:,} denied" if tc["denied"] else "",
             f"{tc['without_result']:,} without a result" if tc["without_result"] else "",
             f"{tc['out_of_scope']:,} outside --since/--project" if tc["out_of_scope"] else ""]
    extra = [e for e in extra if e]
    lines.append(f"  tool calls found: {tc['found']:,}" + (f" ({', '.join(extra)})" if extra else ""))
    if r.dry_run:
        lines.append(f"  new tool calls: {ev['new']:,}; already in the store: {ev['already_journaled']:,}")
    else:
        lines.append(f"  journaled: {ev['new']:,} new, {ev['already_journaled']:,} already in the store")
        lines.append(f"  documents: {docs['new']:,} new, {docs['duplicate']:,} duplicate"
                     + (f"; {ev['skipped']:,} results not stored (errors, empty)" if ev["skipped"] else ""))
    parts = [f"{err['bad_lines']:,} unreadable lines" if err["bad_lines"] else "",
             f"{err['long_lines']:,} over-long lines" if err["long_lines"] else "",
             f"{err['unknown_shapes']:,} unknown shapes" if err["unknown_shapes"] else "",
             f"{err['too_large']:,} results over the size cap" if err["too_large"] else "",
             f"{len(err['unreadable_files']):,} unreadable files" if err["unreadable_files"] else ""]
    parts = [p for p in parts if p]
    lines.append(f"  errors skipped: {err['total']:,}" + (f" ({', '.join(parts)})" if parts else ""))
    return lines


@click.command("import-transcripts")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--since", "since", metavar="DATE", default=None,
              help="Only tool calls at or after DATE (2026-01-31, an ISO time, or an age: 30d).")
@click.option("--project", "project", type=click.Path(file_okay=False), default=None,
              help="Only sessions whose working directory is DIR or inside it.")
@click.option("--dry-run", is_flag=True, help="Read and count; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def import_transcripts_cmd(paths, since, project, dry_run, as_json):
    """Import past Claude Code sessions (transcripts) into the store.

    PATHS are transcript files or folders (default: ~/.claude/projects, and
    $CLAUDE_CONFIG_DIR/projects when set). Each Context7, Exa, WebFetch and WebSearch call
    found goes through the same capture path as a live hook, dated when it happened.
    Running it again imports only what is new."""
    since_at = None
    if since is not None:
        try:
            since_at = parse_since(since)
        except click.BadParameter as exc:
            raise click.UsageError(f"--since: {exc.message}") from None
    missing = [p for p in paths if not os.path.exists(p)]
    if missing and len(missing) == len(paths) and not as_json:  # --json reports them in its object
        raise Fail("no such file or folder: " + ", ".join(missing))
    try:
        with _render.transcript_progress(not as_json) as progress:
            report = import_transcripts(list(paths) or None, since=since_at, project=project,
                                        dry_run=dry_run, progress=progress)
    except OSError as exc:
        raise Fail(f"cannot import: {exc.strerror or exc}") from None
    if as_json:
        echo_json("import-transcripts", report.as_dict())
    else:
        for line in summary_lines(report):
            click.echo(line)
        for p in report.missing:
            click.echo(f"memhooks: no such file or folder: {p}", err=True)
        if not report.files and not report.missing:
            where = ", ".join(paths) if paths else " and ".join(_default_roots())
            click.echo(f"no transcripts found in {where}", err=True)
    if report.missing and not report.files:
        sys.exit(1)


def _default_roots() -> list[str]:
    home = os.path.expanduser("~")
    return [r.replace(home, "~", 1) if r.startswith(home) else r for r in transcript_roots()]
