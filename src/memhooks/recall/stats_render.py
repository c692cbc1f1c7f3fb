"""`memhooks stats` for people: the figures of memhooks.recall.stats.gather as rich tables
with a 30-day terminal chart (`render`), or as one self-contained HTML page (`render_html`).
Nothing here reads the store.
"""

from __future__ import annotations

import os
from html import escape
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memhooks.egress import one_line
from memhooks.recall import stats_fallbacks, stats_providers
from memhooks.termtext import human_bytes, tokens

if TYPE_CHECKING:
    from rich.console import JustifyMethod


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 document`, `2 documents`, `1,024 reads`."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


SPARK = " ▁▂▃▄▅▆▇█"
NEXT_STEPS = [
    ("memhooks install", "capture from now on (or load the plugin)"),
    ("memhooks import-transcripts", "backfill from your past Claude Code sessions"),
    ("memhooks warm", "resolve this project's libraries to Context7 IDs"),
]


def next_steps_lines() -> list[str]:
    width = max(len(cmd) for cmd, _ in NEXT_STEPS)
    return [f"  {cmd:<{width}}  {why}" for cmd, why in NEXT_STEPS]


def sparkline(values: list[int]) -> str:
    top = max(values) if values else 0
    if top <= 0:
        return "·" * len(values)
    return "".join("·" if v <= 0 else SPARK[max(1, round(v / top * (len(SPARK) - 1)))] for v in values)


def hbar(value: int, top: int, width: int = 12) -> str:
    """A horizontal bar of `value` against the largest `top` (a lone row gets a full bar;
    no rows, or a top of 0, no bar at all)."""
    if top <= 0 or value <= 0:
        return ""
    return "█" * max(1, round(value / top * width))


def token_words(n: int, unit: bool = True) -> str:
    """An estimate of tokens that never reads like a failure: `< 1k tokens`, `~12k tokens`."""
    words = tokens(n)
    return words if unit else words.removesuffix(" tokens")


def _short_path(path: str, width: int) -> str:
    path = home_short(path)
    return path if len(path) <= width else "…" + path[-(width - 1):]


def home_short(path: str) -> str:
    """`path` with the home folder written `~` (a page or a screenshot names no user)."""
    home = os.path.expanduser("~").rstrip(os.sep)
    if home and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


CHART_ROWS = (("captures", "captures"), ("agent_reads", "agent reads"),
              ("calls_avoided", "calls avoided"))


def is_empty(data: dict) -> bool:
    """Nothing useful stored yet: no document, capture, tier1 entry or served call. Events
    alone (say one rate-limited call, skipped) do not count: such a store gets the same next
    steps as an empty one."""
    return not (data["documents"]["count"] or data["captures"]["count"] or data["tier1"]["total"]
                or (data.get("serving") or {}).get("calls_avoided"))


def events_note(data: dict) -> str:
    """For a store with nothing useful: what its journal holds (empty when nothing)."""
    e = data["events"]
    if not e["total"]:
        return ""
    states = ", ".join(f"{n:,} {state}" for state, n in e["by_state"].items() if n)
    reasons = e.get("skip_reasons") or e.get("failure_reasons") or []
    why = ""
    if reasons:
        why = f"; most often: {one_line(reasons[0]['reason'], 80)}"
    return (f"The journal holds {plural(e['total'], 'event')} ({states}), none of them "
            f"documentation yet{why}.")


SERVED_NONE = ("Served from the store: nothing yet. A repeated Context7, Exa or WebFetch call "
               "is answered from here when the captured docs cover it (docs/serving.md).")


def served_headline(sv: dict) -> str:
    return (f"Served from the store: {plural(sv['calls_avoided'], 'call')} avoided, "
            f"{human_bytes(sv['bytes_served'])} served ({token_words(sv.get('tokens_served_est', 0))}), "
            f"{token_words(sv['tokens_saved_est'])} saved (est.), "
            f"{plural(sv['insisted'], 'repeat')} let through")


def render(data: dict, console=None) -> None:
    """Print `data` (from gather) for people: a header that fits 80 columns, what to do next
    on an empty store, a 30-day chart, then the tables."""
    def cell(value, n: int = 120) -> Text:  # a stored value: one safe line, never rich markup
        return Text(one_line(value, n))

    console = console or Console()
    scope = f"project {data['project']}" if data["project"] else "all projects"
    db = data["db"]
    d, c, a = data["documents"], data["captures"], data["access"]
    console.print(f"[bold]memhooks stats[/bold] · {_short_path(scope, 40)} · "
                  f"{plural(d['count'], 'document')} · {human_bytes(db['total_bytes'])} on disk",
                  highlight=False, overflow="ellipsis", no_wrap=True)
    console.print(f"store: {_short_path(db['path'], 72)}", highlight=False, no_wrap=True,
                  overflow="ellipsis")
    if is_empty(data):
        note = events_note(data)
        if note:
            console.print("\n" + note, highlight=False, markup=False)
        console.print("\nNothing captured yet. Next:", highlight=False)
        for line in next_steps_lines():
            console.print(line, highlight=False, markup=False)
        b = data.get("budget") or {}
        if b.get("known") or b.get("rate_limited_epoch") is not None:  # a warm ran, say
            console.print("\n" + stats_providers.budget_words(b), highlight=False, markup=False)
        return

    daily = data.get("daily") or {}
    days = daily.get("days") or []
    if days:
        console.print(f"\n[bold]Last {len(days)} days[/bold] ({days[0][5:]} … {days[-1][5:]}, UTC)",
                      highlight=False)
        for key, label in CHART_ROWS:
            values = daily.get(key) or [0] * len(days)
            if sum(values):
                console.print(f"  {label:<14}{sparkline(values)}  {sum(values):>7,}", highlight=False)
            else:  # no empty axis: say so
                console.print(f"  {label:<14}none in these {len(days)} days", highlight=False)
        console.print("")

    docs = Table(title=f"Documents: {plural(d['count'], 'document')} ({human_bytes(d['bytes'])})",
                 title_justify="left")
    doc_cols: tuple[tuple[str, JustifyMethod], ...] = (
        ("source tool", "left"), ("type", "left"), ("documents", "right"), ("bytes", "right"))
    for col, just in doc_cols:
        docs.add_column(col, justify=just)
    for r in d["by_source_tool"]:
        docs.add_row(cell(r["source_tool"], 40), cell(r["type"] or "", 40), f"{r['count']:,}",
                     human_bytes(r["bytes"]))
    console.print(docs)

    cap = Table(title="Captures and dedup", title_justify="left", show_header=False)
    cap.add_column(justify="left")
    cap.add_column(justify="right")
    cap.add_row("captures", f"{c['count']:,}")
    cap.add_row("unique documents", f"{c['unique_documents']:,}")
    cap.add_row("bytes captured", human_bytes(c["captured_bytes"]))
    cap.add_row("bytes stored (unique)", human_bytes(c["unique_bytes"]))
    cap.add_row("saved by dedup", human_bytes(c["dedup_saved_bytes"]))
    cap.add_row("oldest capture", c["oldest"] or "-")
    cap.add_row("newest capture", c["newest"] or "-")
    console.print(cap)

    agent, user = a.get("agent") or {}, a.get("user") or {}
    own = (f"; yours: {plural(user.get('reads', 0), 'read')}" if user.get("reads") else "")
    if a["top"]:
        top = Table(title=f"Most read by the agent ({plural(agent.get('reads', 0), 'read')} of "
                          f"{plural(agent.get('documents_read', 0), 'document')}{own})",
                    title_justify="left")
        top_cols: tuple[tuple[str, JustifyMethod], ...] = (
            ("id", "right"), ("title", "left"), ("tool", "left"), ("reads", "right"), ("last read", "left"))
        for col, just in top_cols:
            top.add_column(col, justify=just, overflow="ellipsis",
                           max_width=40 if col == "title" else None)
        for r in a["top"]:
            top.add_row(str(r["id"]), cell(r["title"] or ""), cell(r["source_tool"], 40),
                        f"{r['agent_reads']:,}", (r["last_accessed"] or "-")[:16].replace("T", " "))
        console.print(top)
    else:
        console.print(f"Most read by the agent: no reads yet{own}. The agent reads through the "
                      "MCP tools, lc-cache-lookup-docs and answers served from the store "
                      "(your own search/show are counted apart).", highlight=False)

    tiers = Table(title="Cache", title_justify="left")
    for col in ("tier", "entries", "fresh", "negative", "hits", "misses", "hit rate"):
        tiers.add_column(col, justify="left" if col == "tier" else "right")
    for name in ("tier1", "tier2"):
        t = data[name]
        rate = "-" if t["hit_rate"] is None else f"{t['hit_rate'] * 100:.1f}%"
        tiers.add_row(name, f"{t['total']:,}", f"{t['fresh']:,}", f"{t['negative']:,}",
                      f"{t['hits']:,}", f"{t['misses']:,}", rate)
    console.print(tiers)

    sv = data.get("serving") or {}
    if sv.get("calls_avoided") or sv.get("insisted"):
        console.print(served_headline(sv), highlight=False, markup=False)
        for key, label in (("tool", "tool"), ("library_id", "library")):
            rows = sv["by_tool" if key == "tool" else "by_library"]
            if not rows:
                continue
            top_calls = max(r["calls_avoided"] for r in rows)
            served = Table(title=f"Served by {label}", title_justify="left")
            for col, just in ((label, "left"), ("calls", "right"), ("", "left"), ("bytes", "right"),
                              ("tokens", "right"), ("saved (est.)", "right")):
                served.add_column(col, justify=just, overflow="ellipsis",
                                  max_width=36 if col == label else None)
            for r in rows:
                served.add_row(cell(r[key] or "(none)", 200), f"{r['calls_avoided']:,}",
                               hbar(r["calls_avoided"], top_calls, 6), human_bytes(r["bytes_served"]),
                               token_words(r.get("tokens_served_est", 0), False),
                               token_words(r["tokens_saved_est"], False))
            console.print(served)
    else:
        console.print(SERVED_NONE, highlight=False, markup=False)

    disk = Table(title=f"On disk: {human_bytes(db['store_bytes'])} of the {human_bytes(db['cap_bytes'])} cap",
                 title_justify="left", show_header=False)
    disk.add_column(justify="left")
    disk.add_column(justify="right")
    for f in db["files"]:
        if f["bytes"]:
            disk.add_row(f["name"], human_bytes(f["bytes"]))
    console.print(disk)
    if not db["frees_pages"]:
        console.print("  (made before incremental vacuum: run `memhooks vacuum` once so prunes "
                      "give space back)", highlight=False)
    if db.get("cap_unmet"):
        console.print(f"  the cap cannot be met by eviction: {db['cap_unmet']['reason']}",
                      highlight=False, markup=False)

    e = data["events"]
    ev = Table(title=f"Events: {e['total']:,}", title_justify="left")
    ev.add_column("state")
    ev.add_column("events", justify="right")
    for state, n in e["by_state"].items():
        ev.add_row(state, f"{n:,}")
    console.print(ev)
    for title, key in (("Skip reasons", "skip_reasons"), ("Failure reasons", "failure_reasons")):
        if e[key]:
            reasons = Table(title=title, title_justify="left")
            reasons.add_column("reason", overflow="fold")
            reasons.add_column("events", justify="right")
            for r in e[key]:
                reasons.add_row(cell(r["reason"], 300), f"{r['count']:,}")
            console.print(reasons)
    stats_fallbacks.render(data, console)
    stats_providers.render(data, console)


# ----------------------------------------------------------------------------- HTML

def _svg_bars(values: list[int], days: list[str], label: str, css: str) -> str:
    """One inline SVG bar chart (no script, no external anything); with nothing to draw, a
    sentence instead of an empty axis. Bars are at most MAX_BAR_W wide (one bar is a bar,
    not a block)."""
    w, h, pad = 600, 110, 20
    n = max(1, len(values))
    peak = max(values) if values else 0
    if peak <= 0:
        return (f'<p class="none {css}">No {escape(label)} in these {len(days)} days.</p>')
    top = peak
    bw = min((w - 2 * pad) / n, MAX_BAR_W)
    bars = []
    for i, v in enumerate(values):
        bh = 0 if v <= 0 else max(2.0, (h - 2 * pad) * v / top)
        x = pad + i * bw
        y = h - pad - bh
        day = escape(days[i]) if i < len(days) else ""
        bars.append(f'<rect class="bar" x="{x + 1:.1f}" y="{y:.1f}" width="{max(1.0, bw - 2):.1f}" '
                    f'height="{bh:.1f}" data-day="{day}" data-value="{int(v)}">'
                    f"<title>{day}: {int(v):,}</title></rect>")
    first = escape(days[0][5:]) if days else ""
    last = escape(days[-1][5:]) if days else ""
    return (f'<svg class="chart {css}" role="img" aria-label="{escape(label)} per day" '
            f'viewBox="0 0 {w} {h}" width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg">'
            f'<line class="axis" x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}"/>'
            + "".join(bars)
            + f'<text x="{pad}" y="{h - 6}" class="tick">{first}</text>'
            f'<text x="{w - pad}" y="{h - 6}" class="tick" text-anchor="end">{last}</text>'
            f'<text x="{pad}" y="14" class="max">{f"max {peak:,}/day" if peak else "none yet"}</text>'
            "</svg>")


MAX_BAR_W = 48.0

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:980px;padding:0 1rem;color:#1d2330;background:#fafbfc}
h1{font-size:1.5rem;margin:0 0 .2rem}h2{font-size:1.1rem;margin:2rem 0 .6rem}
.sub{color:#5b6475;margin:0 0 1.2rem;word-break:break-all}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:.8rem}
.card{background:#fff;border:1px solid #e3e7ee;border-radius:10px;padding:.8rem 1rem}
.card .n{font-size:1.6rem;font-weight:650}.card .l{color:#5b6475;font-size:.85rem}
.charts{display:grid;gap:1rem}.panel{background:#fff;border:1px solid #e3e7ee;border-radius:10px;
padding:.8rem 1rem}.panel h3{margin:0 0 .4rem;font-size:.95rem}
svg.chart{width:100%;height:auto}svg .axis{stroke:#c9d0db}svg .tick,svg .max{font-size:11px;fill:#6b7385}
svg.captures .bar{fill:#3b7dd8}svg.agent-reads .bar{fill:#2f9e6e}svg.calls-avoided .bar{fill:#d98a2b}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #e3e7ee;border-radius:10px}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #eef1f5;vertical-align:top}
td.r,th.r{text-align:right}.empty{background:#fff8e6;border:1px solid #f0d9a0;border-radius:10px;
padding:1rem 1.2rem}code{background:#eef1f5;padding:.05rem .3rem;border-radius:4px}
footer{color:#8a92a3;font-size:.8rem;margin-top:2rem}
p.none{color:#6b7385;margin:.4rem 0}
td.bar{width:30%}.hbar{display:block;height:.8rem;border-radius:3px;background:#d98a2b;min-width:3px}
#served .cards{margin-bottom:.8rem}
"""


def _served_html(sv: dict, t, table) -> str:
    """The served-from-the-store section: totals, then calls, bytes and tokens by tool and
    by library, each row with a bar against the largest (CSS widths, no division by zero)."""
    parts = ["<section id=\"served\"><h2>Served from the store</h2>"]
    if not (sv.get("calls_avoided") or sv.get("insisted")):
        parts.append(f"<p class=\"none\">{t(SERVED_NONE.removeprefix('Served from the store: '))}</p>")
        return "".join(parts) + "</section>"
    cards = [(f"{sv['calls_avoided']:,}", "calls avoided"),
             (human_bytes(sv["bytes_served"]), "served"),
             (token_words(sv.get("tokens_served_est", 0), False), "tokens served to the agent"),
             (token_words(sv["tokens_saved_est"], False), "tokens saved (estimate)"),
             (f"{sv['insisted']:,}", "repeats let through")]
    parts.append("<div class=\"cards\">" + "".join(
        f"<div class=\"card\"><div class=\"n\">{t(n)}</div><div class=\"l\">{t(label)}</div></div>"
        for n, label in cards) + "</div>")
    for key, label, tid in (("tool", "tool", "served-by-tool"), ("library_id", "library", "served-by-library")):
        rows = sv["by_tool" if key == "tool" else "by_library"]
        top = max((r["calls_avoided"] for r in rows), default=0)
        parts.append(f"<h3>By {label}</h3>")
        body = [[r[key] or "(none)", f"{r['calls_avoided']:,}",
                 ("bar", 100.0 * r["calls_avoided"] / top if top > 0 else 0.0),
                 human_bytes(r["bytes_served"]), token_words(r.get("tokens_served_est", 0), False),
                 token_words(r["tokens_saved_est"], False)] for r in rows]
        parts.append(table(tid, [(label, False), ("calls", True), ("", False), ("bytes", True),
                                 ("tokens served", True), ("tokens saved (est.)", True)], body))
    return "".join(parts) + "</section>"


def render_html(data: dict) -> str:
    """One self-contained page (inline CSS and SVG; no script, no network) with the same
    figures and charts as `render`. Every captured string is escaped."""
    def t(x) -> str:
        return escape(str(x if x is not None else ""))

    d, c, a, db = data["documents"], data["captures"], data["access"], data["db"]
    agent, user = a.get("agent") or {}, a.get("user") or {}
    sv = data.get("serving") or {}
    scope = f"project {home_short(data['project'])}" if data["project"] else "all projects"
    cards = [
        (plural(d["count"], "document").split(" ", 1), human_bytes(d["bytes"])),
        (plural(c["count"], "capture").split(" ", 1), f"{human_bytes(c['dedup_saved_bytes'])} saved by dedup"),
        (plural(agent.get("reads", 0), "agent read").split(" ", 1),
         f"{plural(user.get('reads', 0), 'read')} by you (search/show)"),
        (plural(sv.get("calls_avoided", 0), "call").split(" ", 1), "avoided (served from the store)"),
    ]
    parts = [
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<title>memhooks stats · {t(scope)}</title><style>{_CSS}</style></head><body>",
        f"<h1>memhooks stats</h1><p class=\"sub\">{t(scope)} · {t(home_short(db['path']))} · "
        f"{t(human_bytes(db['total_bytes']))} on disk · generated {t(data['generated_at'])}</p>",
    ]
    if is_empty(data):
        note = events_note(data)
        parts.append("<div class=\"empty\" id=\"next-steps\">"
                     + (f"<p>{t(note)}</p>" if note else "")
                     + "<strong>Nothing captured yet.</strong> Next:<ul>"
                     + "".join(f"<li><code>{t(cmd)}</code> — {t(why)}</li>" for cmd, why in NEXT_STEPS)
                     + "</ul></div>")
    parts.append("<div class=\"cards\">" + "".join(
        f"<div class=\"card\"><div class=\"n\">{t(num)}</div><div class=\"l\">{t(word)} · {t(extra)}</div></div>"
        for (num, word), extra in cards) + "</div>")
    daily = data.get("daily") or {}
    days = daily.get("days") or []
    parts.append(f"<h2>Last {len(days)} days (UTC)</h2><div class=\"charts\">")
    for key, label in CHART_ROWS:
        values = daily.get(key) or [0] * len(days)
        parts.append(f"<div class=\"panel\" id=\"chart-{key.replace('_', '-')}\"><h3>{t(label)} · "
                     f"{sum(values):,} in {len(days)} days</h3>"
                     + _svg_bars(values, days, label, key.replace("_", "-")) + "</div>")
    parts.append("</div>")

    def td(v, right: bool) -> str:
        if isinstance(v, tuple) and v and v[0] == "bar":  # ("bar", percent): a CSS bar
            pct = max(0.0, min(100.0, float(v[1])))
            return (f"<td class=\"bar\"><span class=\"hbar\" style=\"width:{pct:.1f}%\"></span></td>"
                    if pct > 0 else "<td class=\"bar\"></td>")
        return f"<td{' class=r' if right else ''}>{t(v)}</td>"

    def table(tid: str, head: list[tuple[str, bool]], rows: list[list]) -> str:
        th = "".join(f"<th{' class=r' if r else ''}>{t(h)}</th>" for h, r in head)
        body = "".join("<tr>" + "".join(td(v, head[i][1]) for i, v in enumerate(row)) + "</tr>"
                       for row in rows)
        if not rows:
            body = f"<tr><td colspan=\"{len(head)}\">none yet</td></tr>"
        return f"<table id=\"{tid}\"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"

    parts.append(f"<h2>Documents: {t(plural(d['count'], 'document'))} ({t(human_bytes(d['bytes']))})</h2>")
    parts.append(table("documents", [("source tool", False), ("type", False), ("documents", True),
                                     ("bytes", True)],
                       [[r["source_tool"], r["type"] or "", f"{r['count']:,}", human_bytes(r["bytes"])]
                        for r in d["by_source_tool"]]))
    parts.append(f"<h2>Most read by the agent ({t(plural(agent.get('reads', 0), 'read'))})</h2>")
    parts.append(table("most-read", [("id", True), ("title", False), ("tool", False), ("agent reads", True),
                                     ("your reads", True), ("last read", False)],
                       [[r["id"], " ".join(str(r["title"] or "").split())[:160], r["source_tool"],
                         f"{r['agent_reads']:,}", f"{r['user_reads']:,}", r["last_accessed"] or "-"]
                        for r in a["top"]]))
    if not is_empty(data):
        parts.append(_served_html(sv, t, table))
    parts.append("<h2>Captures and dedup</h2>")
    parts.append(table("captures", [("", False), ("", True)], [
        ["captures", f"{c['count']:,}"], ["unique documents", f"{c['unique_documents']:,}"],
        ["bytes captured", human_bytes(c["captured_bytes"])], ["saved by dedup", human_bytes(c["dedup_saved_bytes"])],
        ["oldest capture", c["oldest"] or "-"], ["newest capture", c["newest"] or "-"]]))
    parts.append("<h2>Cache</h2>")
    parts.append(table("cache", [("tier", False), ("entries", True), ("fresh", True), ("negative", True),
                                 ("hits", True), ("misses", True), ("hit rate", True)],
                       [[n, f"{data[n]['total']:,}", f"{data[n]['fresh']:,}", f"{data[n]['negative']:,}",
                         f"{data[n]['hits']:,}", f"{data[n]['misses']:,}",
                         "-" if data[n]["hit_rate"] is None else f"{data[n]['hit_rate'] * 100:.1f}%"]
                        for n in ("tier1", "tier2")]))
    parts.append(f"<h2>On disk: {t(human_bytes(db['store_bytes']))} of the {t(human_bytes(db['cap_bytes']))} cap</h2>")
    parts.append(table("on-disk", [("file", False), ("bytes", True)],
                       [[f["name"], human_bytes(f["bytes"])] for f in db["files"] if f["bytes"]]))
    e = data["events"]
    parts.append(f"<h2>Events: {e['total']:,}</h2>")
    parts.append(table("events", [("state", False), ("events", True)],
                       [[k, f"{v:,}"] for k, v in e["by_state"].items()]))
    parts.append(stats_fallbacks.html(data))
    parts.append(stats_providers.html(data))
    parts.append("<footer>memhooks · this page is self-contained: no scripts, no network.</footer>"
                 "</body></html>\n")
    return "".join(parts)
