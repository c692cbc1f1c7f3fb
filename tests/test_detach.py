"""One detached ingester at a time: the hook that starts it takes the ingest lock and hands
it to the child, so hooks that fire while the child is still starting see it running."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from conftest import ROOT, db_rows, journal_file, load_payload, run_hook, wait_idle


def _slow_python(tmp_path, starts):
    """A MEMHOOKS_PYTHON that notes each start and takes a second to get going (as a cold
    interpreter with the dependencies can), then runs this python."""
    path = tmp_path / "slow-python"
    path.write_text(f'#!/bin/sh\necho "$$ $*" >> "{starts}"\nsleep 1\nexec "{sys.executable}" "$@"\n')
    path.chmod(0o755)
    return path


def _ingesters(starts) -> int:
    """How many ingesters the slow python was started as (the hooks run it too)."""
    return sum(" ingest " in line for line in starts.read_text().splitlines())


def _payload(i: int) -> dict:
    p = load_payload("webfetch")
    p["tool_use_id"] = f"toolu_burst_{i}"
    p["tool_input"] = {**p.get("tool_input", {}), "url": f"https://docs.example.invalid/page-{i}"}
    return p


def test_a_burst_of_hooks_starts_one_ingester_and_every_event_is_ingested(store, tmp_path):
    starts = tmp_path / "starts"
    env = dict(os.environ, MEMHOOKS_PYTHON=str(_slow_python(tmp_path, starts)))
    with ThreadPoolExecutor(max_workers=12) as pool:
        procs = list(pool.map(lambda i: run_hook("post-tool-use", _payload(i), env=env), range(12)))
    assert all(p.returncode == 0 and not p.stdout for p in procs), [p.stderr for p in procs]
    time.sleep(0.3)
    assert _ingesters(starts) == 1  # the other eleven saw the handed lock held
    wait_idle(store, timeout=60)
    states = db_rows(store, "SELECT state, count(*) FROM events GROUP BY state")
    assert dict(states).get("pending", 0) == 0 and sum(n for _, n in states) == 12, states


def test_the_child_holds_the_lock_from_the_moment_it_is_started(store, tmp_path, monkeypatch):
    from memhooks.detach import spawn_ingest

    starts = tmp_path / "starts"
    monkeypatch.setenv("MEMHOOKS_PYTHON", str(_slow_python(tmp_path, starts)))
    assert run_hook("post-tool-use", _payload(0), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1")).returncode == 0
    assert spawn_ingest(str(store)) is True
    assert spawn_ingest(str(store)) is False  # the first child is still in its one-second start
    wait_idle(store, timeout=60)
    assert _ingesters(starts) == 1
    assert db_rows(store, "SELECT count(*) FROM events WHERE state = 'pending'") == [(0,)]
    assert spawn_ingest(str(store)) is True  # free again once it is done
    wait_idle(store, timeout=60)


def test_an_ingester_given_a_descriptor_that_is_not_the_lock_takes_the_lock_itself(store, tmp_path):
    assert run_hook("post-tool-use", _payload(1), env=dict(os.environ, MEMHOOKS_NO_SPAWN="1")).returncode == 0
    other = os.open(tmp_path / "not-the-lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        for arg in (f"--lock-fd={other}", "--lock-fd=1", "--lock-fd=x", "--lock-fd=99999"):
            proc = subprocess.run([sys.executable, str(ROOT / "src" / "memhooks" / "_entry.py"), "ingest",
                                   "--background", arg], pass_fds=(other,), capture_output=True, text=True,
                                  timeout=120)
            assert proc.returncode == 0 and proc.stderr == "", (arg, proc.stderr)
    finally:
        os.close(other)
    assert db_rows(store, "SELECT count(*) FROM events WHERE state = 'pending'") == [(0,)]
    assert journal_file(store).is_file()
