"""The fallbacks block of `memhooks stats`: failed live calls answered from the store by the
PostToolUse hook (memhooks.recall.fallback), by tool, library and day (terminal and HTML)."""

from __future__ import annotations

from html import escape

from rich.table import Table

from memhooks.egress import one_line


def headline(fb: dict) -> str:
    n = fb.get("fallbacks") or 0
    return (f"Fallbacks: {n:,} failed live call{'s' * (n != 1)} answered from the store "
            f"({fb.get('bytes') or 0:,} bytes)")


def _rows(fb: dict) -> list[tuple[str, str, int]]:
    out = []
    for key, label in (("tool", "tool"), ("library_id", "library"), ("reason", "why"),
                       ("field", "given as"), ("day", "day")):
        for r in fb.get("by_" + {"library_id": "library"}.get(key, key)) or []:
            out.append((label, str(r.get(key) or "(none)"), int(r.get("fallbacks") or 0)))
    return out


def render(data: dict, console) -> None:
    """The terminal block (nothing when no fallback was ever given)."""
    fb = data.get("fallbacks") or {}
    if not fb.get("fallbacks"):
        return

    console.print(headline(fb), highlight=False, markup=False)
    table = Table()
    for col in ("by", "", "fallbacks"):
        table.add_column(col, justify="right" if col == "fallbacks" else "left")
    for label, value, n in _rows(fb):
        table.add_row(label, one_line(value, 120), f"{n:,}")
    console.print(table)


def html(data: dict) -> str:
    fb = data.get("fallbacks") or {}
    if not fb.get("fallbacks"):
        return ""
    rows = "".join(f"<tr><td>{escape(label)}</td><td>{escape(value[:200])}</td><td class=r>{n:,}</td></tr>"
                   for label, value, n in _rows(fb))
    return (f"<h2>{escape(headline(fb))}</h2><table id=\"fallbacks\"><thead><tr><th>by</th><th></th>"
            f"<th class=r>fallbacks</th></tr></thead><tbody>{rows}</tbody></table>")
