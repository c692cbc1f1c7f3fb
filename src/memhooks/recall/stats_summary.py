"""`memhooks stats` at a terminal: the headline that fits one screen (the tables are
memhooks.recall.stats_render's, shown with --full)."""

from __future__ import annotations

from textwrap import wrap

from memhooks.egress import one_line
from memhooks.recall.stats_providers import budget_words, provider_words
from memhooks.recall.stats_render import (
    CHART_ROWS,
    _short_path,
    events_note,
    home_short,
    is_empty,
    next_steps_lines,
    plural,
    served_headline,
    sparkline,
)
from memhooks.termtext import human_bytes

TOP_SUMMARY = 3  # documents the summary names


def _rate(t: dict) -> str:
    return "-" if t["hit_rate"] is None else f"{t['hit_rate'] * 100:.0f}%"


def summary_lines(data: dict) -> list[str]:
    """`memhooks stats` at a terminal: the numbers that matter, in one screen (under 20
    lines at 80 columns), then how to see the rest. Plain text, every stored value one safe
    line."""
    scope = f"project {home_short(data['project'])}" if data["project"] else "all projects"
    db, d, c, a = data["db"], data["documents"], data["captures"], data["access"]
    agent, user = a.get("agent") or {}, a.get("user") or {}
    sv = data.get("serving") or {}
    fb = data.get("fallbacks") or {}
    e = data["events"]
    lines = [f"memhooks stats · {_short_path(scope, 40)} · {plural(d['count'], 'document')} · "
             f"{human_bytes(db['total_bytes'])} on disk",
             f"store: {_short_path(db['path'], 72)}"]
    if is_empty(data):
        note = events_note(data)
        lines += ([""] + [note] if note else []) + ["", "Nothing captured yet. Next:", *next_steps_lines()]
        b = data.get("budget") or {}
        if b.get("known") or b.get("rate_limited_epoch") is not None:  # a warm ran, say
            lines += [""] + wrap(budget_words(b), 80, subsequent_indent="  ")
        return lines
    lines.append("")
    if sv.get("calls_avoided") or sv.get("insisted"):
        lines.append(served_headline(sv))
    else:
        lines.append("Served from the store: nothing yet (a repeated call the captured docs "
                     "cover is answered from here)")
    if fb.get("fallbacks"):
        lines.append(f"Fallbacks: {plural(fb['fallbacks'], 'failed live call')} answered from the store")
    lines.append(f"Agent reads: {plural(agent.get('reads', 0), 'read')} of "
                 f"{plural(agent.get('documents_read', 0), 'document')}"
                 f"; yours (search/show): {plural(user.get('reads', 0), 'read')}")
    lines.append(f"Documents: {plural(d['count'], 'document')} ({human_bytes(d['bytes'])}) from "
                 f"{plural(c['count'], 'capture')}; dedup saved {human_bytes(c['dedup_saved_bytes'])}")
    t1, t2 = data["tier1"], data["tier2"]
    lines.append(f"Cache: {plural(t1['total'], 'library ID')} ({t1['fresh']:,} fresh), hit rate "
                 f"{_rate(t1)}; {plural(t2['total'], 'topic')} ({t2['fresh']:,} fresh), hit rate {_rate(t2)}")
    states = e["by_state"]
    trouble = ", ".join(f"{states[k]:,} {k}" for k in ("pending", "failed") if states.get(k))
    lines.append(f"Events: {e['total']:,}" + (f" ({trouble})" if trouble else ", all projected"))
    lines += provider_words(data.get("providers") or [])
    if data.get("budget"):
        lines += wrap(budget_words(data["budget"]), 80, subsequent_indent="  ")
    daily = data.get("daily") or {}
    days = daily.get("days") or []
    if days:
        lines.append("")
        lines.append(f"Last {len(days)} days ({days[0][5:]} … {days[-1][5:]}, UTC)")
        for key, label in CHART_ROWS:
            values = daily.get(key) or [0] * len(days)
            lines.append(f"  {label:<14}{sparkline(values)}  {sum(values):>7,}" if sum(values)
                         else f"  {label:<14}none in these {len(days)} days")
    if a["top"]:
        lines.append("")
        lines.append("Most read by the agent:")
        for r in a["top"][:TOP_SUMMARY]:
            lines.append(f"  {r['agent_reads']:>5,}×  {one_line(r['title'] or '', 60)} "
                         f"(id {r['id']}, {one_line(r['source_tool'], 20)})")
    lines.append("")
    lines.append("More: `memhooks stats --full` (every table) · --json · --html FILE")
    return lines
