"""`memhooks search` and `memhooks show` for a person at a terminal (no agent preamble, no
fence): ranked hits with title, library, URL and age, a short snippet wrapped to the
terminal's width, or whole bodies; and the pager for long output.

Every stored field goes through memhooks.egress: titles, URLs, library IDs and topics as
one safe line (`one_line`), bodies and snippets cleaned and with fence look-alike lines
defused (`defuse`, which cleans first). The agent-facing form (memhooks.recall.render,
fenced with its reference-only note) stays what pipes and agents get.
"""

from __future__ import annotations

import time

import click

from memhooks import termtext
from memhooks.egress import clean, defuse, one_line
from memhooks.names import checked_library_id

SNIPPET_LINES = 3  # lines of snippet per hit
INDENT = "   "


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _trim_last(line: str, width: int) -> str:
    """`line` with an ellipsis at its end, words dropped from its end until it fits."""
    words = line.split(" ")
    while len(words) > 1 and termtext.cells(" ".join(words) + " …") > width:
        words.pop()
    return " ".join(words) + " …"


def _facts(r: dict, now: float, verb: str = "") -> list[str]:
    """Where a hit or document came from: tool, library, URL, age."""
    facts = [one_line(r.get("source_tool"), 40) or "?"]
    lid = checked_library_id(r.get("library_id")) if r.get("library_id") else None
    if lid:
        facts.append(lid)
    elif r.get("library_id"):
        facts.append("(malformed library ID withheld)")
    if r.get("url"):
        facts.append(one_line(r["url"], 300))
    elif not lid and r.get("source"):
        facts.append(one_line(r["source"], 200))
    if r.get("version"):
        facts.append(f"version {one_line(r['version'], 40)}")
    facts.append(verb + termtext.ago(r.get("created_at_epoch"), now))
    if "agent_reads" in r:  # the agent's reads apart from the user's own (search/show)
        facts.append(f"read by the agent {r['agent_reads']:,}×, by you {r.get('user_reads', 0):,}×")
    return facts


def _snippet(text: str, width: int) -> list[str]:
    """A snippet as at most SNIPPET_LINES wrapped lines (whitespace folded to single spaces)."""
    lines = termtext.wrap(defuse(text), width, INDENT, INDENT)
    if len(lines) > SNIPPET_LINES:
        lines = lines[:SNIPPET_LINES]
        lines[-1] = _trim_last(lines[-1], width)
    return lines


def results_text(query: str, results: list[dict], *, width: int, bodies: dict | None = None,
                 now: float | None = None) -> str:
    """Ranked hits for a person. `bodies` (id -> whole text) replaces the snippets (--full)."""
    now = time.time() if now is None else now
    shown = one_line(query, 120)
    if not (query or "").strip():
        return "Empty query: nothing searched. Give some words, e.g. memhooks search 'useEffect cleanup'."
    if not results:
        return "\n".join(termtext.wrap(
            f'No cached documents match "{shown}". memhooks keeps what your agent fetched '
            "(Context7, Exa, WebFetch, WebSearch). Try fewer or other words; `memhooks stats` "
            "shows what is stored, and `memhooks import-transcripts` adds what past sessions "
            "fetched.", width))
    how = {r.get("match") for r in results}
    note = ""
    if how == {"substring"}:
        note = " (no word matched; these contain the text)"
    elif "fts-any" in how:
        note = " (no document has every word; ranked by any word)"
    n = len(results)
    lines = termtext.wrap(f'{n} cached document{_s(n)} for "{shown}", best first{note}:', width)
    for i, r in enumerate(results, 1):
        lines.append("")
        title = one_line(r.get("title"), 300) or "(untitled)"
        lines += termtext.wrap(f"{i}. {title} (id {r['id']})", width, "", INDENT)
        lines += termtext.wrap(" · ".join(_facts(r, now)), width, INDENT, INDENT)
        if bodies is not None and r["id"] in bodies:
            lines += termtext.wrap_block(defuse(bodies[r["id"]]), width, INDENT)
        else:
            lines += _snippet(r.get("snippet") or "", width)
    lines.append("")
    tail = ("`memhooks show ID` prints one whole document." if bodies is not None else
            "`memhooks show ID` prints a whole document; `--full` prints every hit's whole text.")
    lines += termtext.wrap(tail, width)
    return clean("\n".join(lines))


def document_text(doc: dict, *, width: int, now: float | None = None) -> str:
    """One document for a person: its title, where it came from, then its text wrapped."""
    now = time.time() if now is None else now
    title = one_line(doc.get("title"), 300) or "(untitled)"
    lines = termtext.wrap(f"{title} (id {doc['id']})", width)
    facts = _facts(doc, now, "captured ")
    if doc.get("topic"):
        facts.insert(-1, f"topic: {one_line(doc['topic'], 120)}")
    facts.append(f"{doc.get('total_chars', 0):,} characters")
    lines += termtext.wrap(" · ".join(facts), width)
    lines += termtext.wrap(f"cite as {doc.get('citation') or '?'}", width)
    if doc.get("capture_truncated"):
        lines.append("the capture itself was cut at the size cap")
    lines.append("")
    lines += termtext.wrap_block(defuse(doc.get("content") or ""), width)
    if doc.get("note"):
        lines.append("")
        lines += termtext.wrap(doc["note"].replace("max_chars", "--max-chars"), width)
    return clean("\n".join(lines))


def page(text: str) -> None:
    """Print `text`; through the pager ($PAGER, else less) when stdout is a terminal and the
    text is longer than the screen."""
    if termtext.is_terminal() and text.count("\n") + 1 >= termtext.height():
        click.echo_via_pager(text if text.endswith("\n") else text + "\n")
    else:
        click.echo(text)
