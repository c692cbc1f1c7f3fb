"""The per-provider part of `memhooks stats`: calls seen, served from the store, failed live
calls the fallback answered, and Context7's last known budget (terminal, HTML, and the
`providers` and `budget` keys of `--json`).

Per provider (memhooks.providers; the ctx7 CLI's lookups count as context7): `live` calls
are the journaled PostToolUse / PostToolUseFailure events (memhooks.store.provider_calls),
`served` the calls the PreToolUse hook answered from the store (they never reached the
provider), `calls` both; `fallbacks` the failed live calls answered from the store, `avoided`
served + fallbacks. Context7's budget is what its API's RateLimit-* / Retry-After headers said
on warm's last searches (memhooks.store.warm_state), with the last rate-limit answer seen
either there or in a captured failure.
"""

from __future__ import annotations

from html import escape

from rich.table import Table

from memhooks.egress import one_line
from memhooks.providers import KNOWN, of_kind
from memhooks.recall.render import iso_utc, when_utc
from memhooks.store import provider_calls
from memhooks.store.stats_queries import context7_budget
from memhooks.termtext import ago

ROW_KEYS = ("calls", "live", "served", "fallbacks", "avoided", "failed", "rate_limited")


def _by_provider(rows: list[dict] | None, count_key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows or []:
        provider = of_kind(r.get("tool"))
        if provider is not None:
            out[provider] = out.get(provider, 0) + int(r.get(count_key) or 0)
    return out


def providers(conn, project: str | None, served: dict, fallbacks: dict) -> list[dict]:
    """One row per provider: the known ones always (zeros when unused), then any other
    (a declared source) that has a figure, by name."""
    tally = provider_calls.summary(conn, project)
    served_by = _by_provider(served.get("by_tool"), "calls_avoided")
    fallback_by = _by_provider(fallbacks.get("by_tool"), "fallbacks")
    names = list(KNOWN) + sorted((set(tally) | set(served_by) | set(fallback_by)) - set(KNOWN))
    out = []
    for name in names:
        t = tally.get(name) or {}
        live, sv, fb = t.get("calls", 0), served_by.get(name, 0), fallback_by.get(name, 0)
        out.append({
            "provider": name, "calls": live + sv, "live": live, "served": sv, "fallbacks": fb,
            "avoided": sv + fb, "failed": t.get("failed", 0), "rate_limited": t.get("rate_limited", 0),
            "last_failure": t.get("last_failure"),
            "last_failed_epoch": t.get("last_failed_at"), "last_failed": iso_utc(t.get("last_failed_at")),
            "last_rate_limited_epoch": t.get("last_rate_limited_at"),
            "last_rate_limited": iso_utc(t.get("last_rate_limited_at")),
        })
    return out


def budget(conn, now: float, rows_all: dict[str, dict]) -> dict:
    """Context7's last known budget: the API's figures (None each when unknown) and the
    latest rate-limit answer, from the API (a 429) or a captured failure (any project)."""
    b = context7_budget(conn, now) or {}
    seen = b.get("seen_at")
    api_429 = seen if b.get("status") == 429 else None
    captured = (rows_all.get("context7") or {}).get("last_rate_limited_at")
    limited, by = None, None
    if api_429 is not None and (captured is None or api_429 >= captured):
        limited, by = api_429, "api"
    elif captured is not None:
        limited, by = min(float(captured), now), "captured failure"
    reset = b.get("reset_at")
    return {
        "provider": "context7", "known": seen is not None,
        "limit": b.get("limit"), "remaining": b.get("remaining"),
        "reset_epoch": reset, "reset": iso_utc(reset),
        "reset_passed": reset is not None and reset <= now,
        "policy": b.get("policy"), "retry_after_s": b.get("retry_after_s"),
        "status": b.get("status"), "seen_epoch": seen, "seen": iso_utc(seen),
        "rate_limited_epoch": limited, "rate_limited": iso_utc(limited), "rate_limited_by": by,
    }


# ----------------------------------------------------------------------------- words

def budget_words(b: dict, now: float | None = None) -> str:
    """One line: what is left of Context7's budget, when it resets, when that was seen."""
    if not b.get("known"):
        head = "Context7 budget: unknown (no Context7 API answer with RateLimit headers seen yet)"
    else:
        left, limit = b.get("remaining"), b.get("limit")
        if left is not None and limit is not None:
            head = f"Context7 budget: {left:,} of {limit:,} requests left"
        elif left is not None:
            head = f"Context7 budget: {left:,} requests left (limit unknown)"
        elif limit is not None:
            head = f"Context7 budget: limit {limit:,} requests (remaining unknown)"
        else:
            head = "Context7 budget: remaining and limit unknown"
        reset = b.get("reset_epoch")
        if reset is not None:
            head += (f", reset at {when_utc(reset)} (passed)" if b.get("reset_passed")
                     else f", resets {when_utc(reset)}")
        else:
            head += ", reset time unknown"
        head += f"; seen {ago(b['seen_epoch'], now)}"
    if b.get("rate_limited_epoch") is not None:
        head += (f"; last rate-limited {ago(b['rate_limited_epoch'], now)}"
                 f" ({b.get('rate_limited_by') or 'unknown'})")
    return head


def provider_words(rows: list[dict], width: int = 80) -> list[str]:
    """`Providers: context7 12 calls (4 avoided, 2 rate-limited) · exa 3 calls …` for the
    providers with calls, wrapped to `width`."""
    parts = []
    for r in rows:
        if not r["calls"] and not r["fallbacks"]:
            continue
        extra = [f"{r['avoided']:,} avoided"] if r["avoided"] else []
        if r["rate_limited"]:
            extra.append(f"{r['rate_limited']:,} rate-limited")
        elif r["failed"]:
            extra.append(f"{r['failed']:,} failed")
        n = r["calls"]
        parts.append(f"{one_line(r['provider'], 40)} {n:,} call{'s' * (n != 1)}"
                     + (f" ({', '.join(extra)})" if extra else ""))
    if not parts:
        return []
    lines, line = [], "Providers: "
    for i, part in enumerate(parts):
        piece = part if i == 0 else " · " + part
        if len(line) + len(piece) > width and line.strip() != "Providers:":
            lines.append(line)
            line = "  " + part
        else:
            line += piece
    lines.append(line)
    return lines


# ----------------------------------------------------------------------------- terminal, HTML

HEAD = ("provider", "calls", "live", "served", "fallbacks", "avoided", "failed", "rate-limited",
        "last rate-limited")


def _cells(r: dict) -> list[str]:
    return [one_line(r["provider"], 40), *(f"{r[k]:,}" for k in ROW_KEYS),
            (r["last_rate_limited"] or "-")[:16].replace("T", " ")]


def render(data: dict, console) -> None:
    """The per-provider table (the providers with calls) and the budget line."""
    rows = [r for r in data.get("providers") or [] if r["calls"] or r["fallbacks"]]
    if rows:
        table = Table(title="Calls per provider", title_justify="left")
        for col in ("provider", "calls", "live", "served", "fallback", "avoided", "failed", "limited"):
            table.add_column(col, justify="left" if col == "provider" else "right")
        for r in rows:
            table.add_row(*_cells(r)[:-1])
        console.print(table)
        limited = [f"{one_line(r['provider'], 40)} {r['last_rate_limited'][:16].replace('T', ' ')} UTC"
                   for r in rows if r["last_rate_limited"]]
        if limited:
            console.print("Last rate-limited: " + ", ".join(limited), highlight=False, markup=False)
    else:
        console.print("Calls per provider: none journaled yet", highlight=False, markup=False)
    if data.get("budget"):
        console.print(budget_words(data["budget"]), highlight=False, markup=False)


def html(data: dict) -> str:
    rows = data.get("providers") or []
    b = data.get("budget") or {}
    head = "".join(f"<th{'' if col in ('provider', 'last rate-limited') else ' class=r'}>{escape(col)}</th>"
                   for col in HEAD)
    body = "".join("<tr>" + "".join(f"<td{'' if i in (0, len(HEAD) - 1) else ' class=r'}>{escape(c)}</td>"
                                    for i, c in enumerate(_cells(r))) + "</tr>" for r in rows)
    figures = [("remaining", b.get("remaining")), ("limit", b.get("limit")),
               ("resets", b.get("reset")), ("seen", b.get("seen")), ("policy", b.get("policy")),
               ("last rate-limited", b.get("rate_limited"))]
    cards = "".join(
        f"<div class=\"card\"><div class=\"n\">{escape(one_line(_shown(v), 40))}</div>"
        f"<div class=\"l\">{escape(label)}</div></div>" for label, v in figures)
    return (f"<section id=\"providers\"><h2>Calls per provider</h2><table id=\"providers-table\">"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<h3>Context7 budget</h3><p id=\"budget-line\">{escape(budget_words(b))}</p>"
            f"<div class=\"cards\" id=\"budget\">{cards}</div></section>")


def _shown(value) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, int):
        return f"{value:,}"
    text = str(value)
    if len(text) == 20 and text[10] == "T" and text.endswith("Z"):  # an ISO time: to the minute
        return text[5:16].replace("T", " ") + " UTC"
    return text
