"""The serve decision's time budget (standard library only; the PreToolUse hook imports it).

One deadline (a `time.monotonic()` value) bounds the whole decision: SQLite's progress
handler aborts a statement that runs past it, and the Python work between statements
(snippet cutting, stemming, coverage, the search of large documents) calls
`Deadline.check()`, which raises `OverBudget`. `within()` runs a decision under both and
turns either way of running late into no answer, so the call goes to the live tool.
"""

import os
import sqlite3
import time

from memhooks.store.bodies import add_functions

DEFAULT_BUDGET_MS = 1500.0  # under the hook's 5 s timeout in hooks.json


def budget_deadline() -> float:
    """time.monotonic() plus MEMHOOKS_SERVE_BUDGET_MS (default 1,500 ms; 0 answers nothing)."""
    try:
        ms = float(os.environ.get("MEMHOOKS_SERVE_BUDGET_MS", "") or DEFAULT_BUDGET_MS)
    except ValueError:
        ms = DEFAULT_BUDGET_MS
    return time.monotonic() + (ms if ms >= 0 else DEFAULT_BUDGET_MS) / 1000


class OverBudget(Exception):
    """The decision ran past its deadline: let the call go to the live tool."""


class Deadline:
    __slots__ = ("at",)

    def __init__(self, at: float):
        self.at = at

    def passed(self) -> bool:
        return time.monotonic() > self.at

    def check(self, reserve: float = 0.0) -> None:
        """Raise OverBudget past the deadline, or when `reserve` seconds (what the next step
        is expected to take) would not fit before it."""
        if time.monotonic() + reserve > self.at:
            raise OverBudget


def install(conn, at: float) -> None:
    """Abort any statement of `conn` that runs past `at` (checked every 2,000 VM steps)."""
    conn.set_progress_handler(lambda: 1 if time.monotonic() > at else 0, 2000)


def connect_guarded(db: str, deadline: float) -> sqlite3.Connection:
    """A connection (autocommit) whose lock waits and statements end by `deadline`."""
    conn = sqlite3.connect(db, timeout=max(0.0, min(1.0, deadline - time.monotonic())),
                           isolation_level=None)
    add_functions(conn)
    install(conn, deadline)  # abort any statement past the budget: never outlast the timeout
    return conn


def within(conn, deadline: float | None, fn, *args):
    """`fn(*args, budget)` with its SQL on `conn` and its Python work (which calls
    `budget.check()`) stopped at `deadline` (default: the budget from now). Its result, or
    None when it ran late: an answer found after the deadline is dropped too. The progress
    handler is taken off `conn` on the way out."""
    budget = Deadline(budget_deadline() if deadline is None else deadline)
    install(conn, budget.at)
    try:
        got = fn(*args, budget)
    except OverBudget:
        return None
    except sqlite3.OperationalError:
        if budget.passed():
            return None  # "interrupted": the progress handler stopped a statement at the deadline
        raise
    finally:
        try:
            conn.set_progress_handler(None, 0)
        except sqlite3.Error:  # (a closed connection has no handler left)
            pass
    return None if budget.passed() else got
