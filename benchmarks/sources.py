"""Bytes and time of `memhooks add` / `memhooks refresh` against a loopback site.

The site (tests/helpers_site.py: http.server in a thread) serves an llms.txt listing N pages
(default 50) with ETags, Last-Modified on every seventh, and counts the body bytes it writes.
Reported:
  * bytes: what `add` downloaded (the client's count and the server's), what the next
    `refresh --all` downloaded (robots.txt only when nothing changed: every page a 304),
    and a refresh after one page changed;
  * time: whole-process `memhooks refresh --all` (N + 1 conditional GETs, all 304s),
    alternated with `python -c pass`, medians of 20+ rounds (benchmarks/_timing.py).

Usage: python benchmarks/sources.py [--pages N] [--rounds R] [--json FILE]
Not a test: timing varies with the machine; the byte counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import PYTHON, compare  # noqa: E402

from helpers_site import Site  # noqa: E402


def _site(site: Site, n: int) -> list[str]:
    paths = []
    for i in range(n):
        path = f"/docs/page{i}.md"
        site.page(path, f"# Page {i}\n\nThe widget frobnicates gizmo{i}.\n\n" + "More text. " * 200,
                  etag=i % 7 != 0)
        paths.append(path)
    site.page("/llms.txt", "# Widgets\n\n## Docs\n" + "".join(f"- [Page {i}]({p})\n" for i, p in enumerate(paths)),
              "text/plain")
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json", dest="json_file")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="memhooks-sources-bench-")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("MEMHOOKS_")}
    env.update(MEMHOOKS_DB=os.path.join(tmp, "memhooks.db"), PYTHONPATH=os.path.join(ROOT, "src"))
    cli = [PYTHON, "-m", "memhooks.cli.main"]

    def run(*argv) -> dict:
        out = subprocess.run([*cli, *argv, "--json"], capture_output=True, text=True, env=env, check=True)
        return json.loads(out.stdout)

    report: dict = {}
    with Site() as site:
        paths = _site(site, args.pages)
        added = run("add", site.url("/llms.txt"))
        report["add"] = {"pages": added["visited"], "client_bytes": added["bytes_downloaded"],
                         "server_bytes": site.total_served(), "requests": added["requests"]}
        site.reset_counts()
        again = run("refresh", "--all")
        report["refresh_unchanged"] = {
            "outcomes": again["outcomes"], "client_bytes": again["bytes_downloaded"],
            "server_bytes": site.total_served(),
            "page_bytes": site.total_served(set(paths) | {"/llms.txt"}),
            "conditional_requests": sum(site.conditional.values())}
        site.reset_counts()
        site.page(paths[3], "# Page 3\n\nchanged\n")
        changed = run("refresh", "--all")
        report["refresh_one_changed"] = {"outcomes": changed["outcomes"],
                                         "client_bytes": changed["bytes_downloaded"],
                                         "server_bytes": site.total_served()}
        for key, value in report.items():
            print(f"{key}: {value}", flush=True)
        report["timing"] = compare(f"memhooks refresh --all ({args.pages + 1} pages, all 304)",
                                   [*cli, "refresh", "--all"], env=env, rounds=args.rounds)
    if args.json_file:
        with open(args.json_file, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)


if __name__ == "__main__":
    main()
