"""Run one ``claude -p`` session against the loopback fakes; used by ``harness.py``.

Usage: ``python _runner.py CONFIG.json``.  The harness may launch this inside
``unshare -n`` (with ``lo`` up), so the fakes live in the same network namespace
as claude and its hooks and MCP servers.  Steps:

1. start ``FakeAnthropic`` (Messages API + Context7 HTTP API) and the TLS page;
2. replace ``{{API_BASE}}`` / ``{{TLS_BASE}}`` in the script, argv and env;
3. run claude in its own process group, with a timeout, stdin from /dev/null;
4. kill the whole group (stray MCP servers), then write the result JSON
   (requests seen by the fakes, claude's rc/stdout/stderr, wall time) to
   ``config["out"]``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fake_api import FakeAnthropic, TLSPageServer
from harness import replace_strings


def _kill_group(pgid: int) -> None:
    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def main(cfg_path: str) -> int:
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    api = FakeAnthropic(port=cfg.get("api_port", 0), final_text=cfg.get("final_text", "All done."))
    tls = TLSPageServer(cfg["cert"], cfg["key"], port=cfg.get("tls_port", 0))
    mapping = {"{{API_BASE}}": api.base_url, "{{TLS_BASE}}": tls.base_url}
    api.script = replace_strings(cfg.get("script") or [], mapping)
    cmd = replace_strings(cfg["cmd"], mapping)
    env = replace_strings(cfg["env"], mapping)
    api.start()
    tls.start()
    result: dict = {"api_port": api.port, "tls_port": tls.port, "cmd": cmd}
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=cfg["cwd"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=cfg.get("timeout", 90))
        result["timed_out"] = False
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        out, err = proc.communicate()
        result["timed_out"] = True
    result["elapsed"] = time.monotonic() - t0
    _kill_group(proc.pid)  # MCP servers and hooks left in claude's group
    result.update(
        rc=proc.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        requests=api.requests,
        tls_requests=tls.requests,
    )
    api.stop()
    tls.stop()
    with open(cfg["out"], "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
