"""Sources you add: `memhooks add` / `refresh` / `sources` against a real HTTP site on loopback
(tests/helpers_site.py: http.server in a thread, counting the body bytes it writes), a real
store, the real CLI as a subprocess; the hostile cases (an off-site redirect, a 1 GiB page, a
gzip bomb, link and redirect loops, a drip-fed page, a hanging one) stay inside the limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import db_rows
from helpers_site import Site, drip, gzip_bomb, hang, huge, redirect, status
from memhooks.cli.results import check
from memhooks.egress import BEGIN_HEAD, END_HEAD
from memhooks.ingest import pages
from memhooks.ingest import sources as sources_mod
from memhooks.ingest.fetch import Limits
from memhooks.store.connect import closing, connect

MIB = 1 << 20
TOKEN = "ghp_" + "a1B2c3D4" * 4 + "e5F6"  # a GitHub token's shape: redacted on the way in


def _cli(*args, ok=(0,), timeout=180):
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    proc = subprocess.run([sys.executable, "-m", "memhooks.cli.main", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
    assert proc.returncode in ok, proc.stderr
    return proc


def _json(*args, ok=(0,)):
    return json.loads(_cli(*args, "--json", ok=ok).stdout)


def _limits(**kw) -> Limits:
    base: dict[str, Any] = {"pages": 200, "page_bytes": 4 * MIB, "total_bytes": 64 * MIB, "budget_s": 60.0,
            "timeout_s": 20.0}
    base.update(kw)
    return Limits(**base)


def _docs_site(site: Site, n: int = 50, other: Site | None = None) -> list[str]:
    """An llms.txt listing `n` pages (markdown, every fifth one HTML; every seventh one served
    with Last-Modified only), itself, one page twice, a page robots.txt forbids, and links
    that are not to be followed (another site, file:, data:)."""
    site.page("/robots.txt", "User-agent: *\nDisallow: /private/\n", "text/plain")
    paths = []
    for i in range(n):
        if i % 5 == 0:
            path = f"/docs/page{i}.html"
            site.page(path, f"<html><head><title>t{i}</title><script>x()</script></head><body>"
                            f"<nav>menu</nav><h1>Widget page {i}</h1><p>The widget frobnicates "
                            f"gizmo{i} quickly &amp; safely.</p></body></html>",
                      "text/html; charset=utf-8", etag=i % 7 != 0)
        else:
            path = f"/docs/page{i}.md"
            site.page(path, f"# Widget page {i}\n\nThe widget frobnicates gizmo{i}.\n\n" + "More text. " * 40,
                      etag=i % 7 != 0)
        paths.append(path)
    lines = ["# Widgets", "", "> Widgets frobnicate gizmos.", "", "## Docs", ""]
    lines += [f"- [Widget page {i}]({p}): page {i}" for i, p in enumerate(paths)]
    lines += ["- [Again](/docs/page1.md#again)", "- [Self](/llms.txt)", "- [Private](/private/secret.md)",
              "- [Passwords](file:///etc/passwd)", "- [Inline](data:text/plain,hello)"]
    if other is not None:
        lines.append(f"- [Elsewhere]({other.url('/stolen.md')})")
    site.page("/private/secret.md", "# Private\n\nnever fetched\n")
    site.page("/llms.txt", "\n".join(lines) + "\n", "text/plain; charset=utf-8")
    return paths


# ----------------------------------------------------------------------------- the CLI, end to end

def test_add_50_pages_then_refresh_downloads_no_body_byte_of_unchanged_pages(store, tmp_path):
    with Site() as site, Site() as other:
        paths = _docs_site(site, 50, other)
        root = site.url("/llms.txt")
        added = _json("add", root, "--library", "/acme/widgets", "--version", "2.1")
        check("add", added)
        assert added["outcomes"] == {"new": 51}  # the llms.txt and its 50 pages
        assert added["skipped"] == {"off-site": 1, "robots.txt": 1}
        assert other.requests == {}  # the other site was never asked
        assert site.requests["/private/secret.md"] == 0
        assert all(site.requests[p] == 1 for p in paths) and site.requests["/llms.txt"] == 1
        assert added["bytes_downloaded"] == site.total_served()  # what the server wrote, all of it
        add_bytes = added["bytes_downloaded"]

        rows = db_rows(store, "SELECT source_tool, tool, type, library_id, version, project, url, title"
                              " FROM documents ORDER BY id")
        assert len(rows) == 51
        assert {r[:6] for r in rows} == {("web", "memhooks-add", "library-docs", "/acme/widgets", "2.1", "")}
        titles = {r[6]: r[7] for r in rows}
        assert titles[root] == "Widgets" and titles[site.url("/docs/page3.md")] == "Widget page 3"
        html_doc = db_rows(store, "SELECT document_text(body) FROM documents WHERE url = ?", (site.url("/docs/page5.html"),))
        assert "frobnicates gizmo5 quickly & safely" in html_doc[0][0] and "x()" not in html_doc[0][0]
        assert "menu" not in html_doc[0][0]

        # a second run: validators sent for every page, 304s, no body byte of any page
        site.reset_counts()
        again = _json("refresh", "--all")
        check("refresh", again)
        assert again["outcomes"] == {"not-modified": 51}
        assert site.conditional["/llms.txt"] == 1 and all(site.conditional[p] == 1 for p in paths)
        assert site.total_served(set(paths) | {"/llms.txt"}) == 0
        refresh_bytes = again["bytes_downloaded"]
        assert refresh_bytes == site.served["/robots.txt"]  # robots.txt is read again, nothing else

        # one page changes: it is stored anew, its source points at the new document
        site.reset_counts()
        before = db_rows(store, "SELECT document_id FROM sources WHERE url = ?", (site.url(paths[7]),))[0][0]
        site.page(paths[7], "# Widget page 7\n\nThe widget now zorbulates the gizmo.\n")
        changed = _json("refresh", root)
        assert changed["outcomes"] == {"not-modified": 50, "updated": 1}
        assert site.total_served(set(paths) - {paths[7]}) == 0 and site.served[paths[7]] > 0
        after = db_rows(store, "SELECT document_id, status FROM sources WHERE url = ?", (site.url(paths[7]),))[0]
        assert after[0] != before and after[1] == "ok"
        assert db_rows(store, "SELECT count(*) FROM documents WHERE id = ?", (before,)) == [(0,)]
        assert db_rows(store, "SELECT count(*) FROM documents") == [(51,)]

        # stored pages are searchable and leave through the one renderer (fenced)
        found = _json("search", "zorbulates")
        assert [r["url"] for r in found["results"]] == [site.url(paths[7])]
        assert found["results"][0]["citation"].startswith("[web: ")
        assert _json("search", "gizmo7")["count"] == 0  # the old text went with it
        assert _json("search", "gizmo8")["count"] == 1
        shown = _json("show", str(after[0]))
        assert shown["content"].startswith(BEGIN_HEAD) and shown["content"].rsplit("\n", 1)[1].startswith(END_HEAD)
        assert "zorbulates" in shown["content"]

        listed = _json("sources")
        check("sources", listed)
        assert listed["count"] == 1
        entry = listed["sources"][0]
        assert (entry["url"], entry["library_id"], entry["version"], entry["pages"]) == (root, "/acme/widgets", "2.1", 51)
        assert entry["statuses"] == {"ok": 51}
        people = _cli("sources").stdout
        assert root in people and "51 pages" in people
    print(f"\nbytes downloaded: add {add_bytes:,} (51 pages + robots.txt), "
          f"refresh {refresh_bytes:,} (robots.txt only; 0 page bytes)")


def test_add_honours_the_page_limit_and_a_second_add_goes_on(store):
    with Site() as site:
        _docs_site(site, 30)
        root = site.url("/llms.txt")
        first = _json("add", root, "--max-pages", "10")
        assert first["visited"] == 10 and first["limits_hit"] == ["pages"]
        assert first["skipped"]["page limit"] == 22  # 21 pages and the private one
        second = _json("add", root, "--max-pages", "100")
        assert second["outcomes"] == {"not-modified": 10, "new": 21}
        assert db_rows(store, "SELECT count(*) FROM sources") == [(31,)]
        people = _cli("add", root, "--max-pages", "5").stdout
        assert "limits reached: pages" in people


def test_add_refuses_what_is_not_http(store):
    for bad in ("file:///etc/passwd", "data:text/plain,hello", "ftp://127.0.0.1/x", "javascript:alert(1)",
                "http://user:pw@127.0.0.1/llms.txt", "not a url"):
        proc = _cli("add", bad, ok=(1,))
        assert proc.stderr.startswith("memhooks: not an http(s) URL") and proc.stdout == ""
    with Site() as site:
        site.page("/llms.txt", "# X\n")
        proc = _cli("add", site.url("/llms.txt"), "--library", "not an id", ok=(1,))
        assert "--library" in proc.stderr and site.requests == {}
    proc = _cli("add", "http://127.0.0.1:9/llms.txt?access_token=" + TOKEN, ok=(1,))
    assert "credential" in proc.stderr and TOKEN not in proc.stderr
    proc = _cli("refresh", ok=(2,))
    assert "--all" in proc.stderr


# ----------------------------------------------------------------------------- hostile sites, in process

@pytest.fixture
def conn(store):
    with closing(connect(str(store))) as c:
        yield c


def test_a_redirect_off_site_is_never_followed(conn):
    with Site() as site, Site() as other:
        other.page("/stolen.md", "# Stolen\n\nsecret text\n")
        site.page("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
        site.route("/away.md", redirect(other.url("/stolen.md")))
        site.route("/scheme.md", redirect("file:///etc/passwd"))
        site.route("/hop1.md", redirect("/hop2.md", 301))
        site.route("/hop2.md", redirect("/final.md", 307))
        site.page("/final.md", "# Final\n\nreached in two hops\n")
        site.page("/llms.txt", "# S\n\n## Docs\n- [Away](/away.md)\n- [Scheme](/scheme.md)\n- [Hops](/hop1.md)\n")
        run = sources_mod.add(conn, site.url("/llms.txt"), limits=_limits())
        by_url = {v.url: v for v in run.visits}
        assert by_url[site.url("/away.md")].outcome == "failed"
        assert "off-site" in (by_url[site.url("/away.md")].reason or "")
        assert "not http(s)" in (by_url[site.url("/scheme.md")].reason or "")
        assert by_url[site.url("/hop1.md")].outcome == "new"
        assert other.requests == {}
        # the root itself redirecting away: nothing is added
        site.route("/moved/llms.txt", redirect(other.url("/llms.txt")))
        with pytest.raises(sources_mod.SourceError, match="off-site"):
            sources_mod.add(conn, site.url("/moved/llms.txt"), limits=_limits())
        assert other.requests == {}
        assert conn.execute("SELECT count(*) FROM sources WHERE root = ?",
                            (site.url("/moved/llms.txt"),)).fetchone() == (0,)


def test_a_1_gib_page_and_a_gzip_bomb_stay_inside_the_byte_caps(conn):
    cap = 256 * 1024
    with Site() as site:
        site.route("/huge.txt", huge(1 << 30))
        site.route("/bomb.txt", gzip_bomb(1 << 30))
        site.page("/llms.txt", "# Big\n\n## Docs\n- [Huge](/huge.txt)\n- [Bomb](/bomb.txt)\n")
        run = sources_mod.add(conn, site.url("/llms.txt"), limits=_limits(page_bytes=cap))
        by_url = {v.url: v for v in run.visits}
        huge_visit, bomb_visit = by_url[site.url("/huge.txt")], by_url[site.url("/bomb.txt")]
        assert huge_visit.outcome == "new" and huge_visit.reason == "cut at the limit of one page"
        assert cap <= huge_visit.downloaded <= cap + 64 * 1024  # one read past the cap at most
        assert bomb_visit.outcome == "new" and bomb_visit.downloaded < cap  # compressed bytes
        for url in (site.url("/huge.txt"), site.url("/bomb.txt")):
            size, content = conn.execute("SELECT bytes, document_text(body) FROM documents WHERE url = ?", (url,)).fetchone()
            assert size <= cap + 200 and "page cut at 262,144 bytes while downloading" in content
        time.sleep(0.2)  # let the server notice the client left
        assert site.served["/huge.txt"] < 32 * MIB  # far from 1 GiB: the client stopped reading
        assert run.downloaded <= 3 * cap


def test_the_run_byte_budget_cuts_the_run(conn):
    with Site() as site:
        body = "# P\n\n" + "word " * 20_000  # ~100 KB each
        for i in range(10):
            site.page(f"/p{i}.md", body + str(i))
        site.page("/llms.txt", "# B\n\n## Docs\n" + "".join(f"- [P{i}](/p{i}.md)\n" for i in range(10)))
        run = sources_mod.add(conn, site.url("/llms.txt"), limits=_limits(total_bytes=300_000))
        assert "bytes" in run.limits_hit
        assert run.downloaded <= 300_000 + 64 * 1024
        assert sum(site.requests[f"/p{i}.md"] for i in range(10)) <= 4


def test_link_and_redirect_loops_visit_each_url_once(conn):
    with Site() as site:
        site.page("/llms.txt", "# Loop\n\n## Docs\n- [Self](/llms.txt)\n- [A](/a.md)\n- [B](/b.md)\n"
                               "- [A again](/a.md#top)\n- [Self again](llms.txt)\n- [R](/r1.md)\n"
                               "## Optional\n- [B again](/b.md)\n")
        site.page("/a.md", "# A\n\n- [B](/b.md)\n- [Index](/llms.txt)\n")
        site.page("/b.md", "# B\n\n- [A](/a.md)\n- [Index](/llms.txt)\n")
        site.route("/r1.md", redirect("/r2.md"))
        site.route("/r2.md", redirect("/r1.md"))
        run = sources_mod.add(conn, site.url("/llms.txt"), limits=_limits())
        assert site.requests["/llms.txt"] == 1 and site.requests["/a.md"] == 1 and site.requests["/b.md"] == 1
        assert site.requests["/r1.md"] == 1 and site.requests["/r2.md"] == 1
        loop = [v for v in run.visits if v.url == site.url("/r1.md")][0]
        assert loop.reason == "redirect loop"
        assert len(run.visits) == 4


def test_a_drip_fed_page_is_stopped_by_the_time_budget_and_a_hanging_one_by_the_timeout(conn):
    with Site() as site:
        site.route("/hang.md", hang())
        site.route("/slow.md", drip(0.05))
        site.page("/late.md", "# Late\n\nnever reached\n")
        site.page("/llms.txt", "# Slow\n\n## Docs\n- [Hang](/hang.md)\n- [Slow](/slow.md)\n- [Late](/late.md)\n")
        run = sources_mod.add(conn, site.url("/llms.txt"), limits=_limits(budget_s=3.0, timeout_s=1.0))
        by_url = {v.url: v for v in run.visits}
        assert (by_url[site.url("/hang.md")].reason or "").startswith("timed out")
        slow = by_url[site.url("/slow.md")]
        assert slow.outcome == "failed" and slow.downloaded > 0
        assert (slow.reason or "").startswith("timed out")  # the timeout (1 s) came before the budget
        # a budget shorter than the timeout: the budget stops the drip
        with pytest.raises(sources_mod.SourceError, match="time budget"):
            sources_mod.add(conn, site.url("/slow.md"), limits=_limits(budget_s=1.5, timeout_s=30.0))


def test_robots_txt_is_respected(conn):
    with Site() as site:
        site.page("/robots.txt", "User-agent: memhooks\nDisallow: /\n\nUser-agent: *\nAllow: /\n", "text/plain")
        site.page("/llms.txt", "# R\n")
        with pytest.raises(sources_mod.SourceError, match="robots.txt"):
            sources_mod.add(conn, site.url("/llms.txt"), limits=_limits())
        assert site.requests["/llms.txt"] == 0
    with Site() as site:
        site.route("/robots.txt", status(503))
        site.page("/llms.txt", "# R\n")
        with pytest.raises(sources_mod.SourceError, match="robots.txt"):
            sources_mod.add(conn, site.url("/llms.txt"), limits=_limits())
        assert site.requests["/llms.txt"] == 0


def test_pages_that_are_not_documents(conn):
    with Site() as site:
        site.page("/img.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "image/png")
        site.page("/secret.md", f"# Keys\n\nexport GITHUB_TOKEN={TOKEN}\nuse it well\n")
        site.page("/empty.html", "<html><body><script>x()</script></body></html>", "text/html")
        site.route("/gone.md", status(404))
        site.page("/llms.txt", "# N\n\n## Docs\n- [Img](/img.png)\n- [Secret](/secret.md)\n"
                               "- [Empty](/empty.html)\n- [Gone](/gone.md)\n"
                               f"- [Keyed](/keyed.md?access_token={TOKEN})\n- [" + "Long " * 100_000 + "](/long.md)\n")
        site.page("/long.md", "# L\n\nlong title\n")
        run = sources_mod.add(conn, site.url("/llms.txt"), limits=_limits())
        out = {v.url.rsplit("/", 1)[1]: v.outcome for v in run.visits}
        assert out == {"llms.txt": "new", "img.png": "not-text", "secret.md": "new", "empty.html": "not-text",
                       "gone.md": "gone", "long.md": "new"}
        assert run.skipped == {"credential in URL": 1} and not [p for p in site.requests if "keyed" in p]
        title = conn.execute("SELECT title FROM sources WHERE url = ?", (site.url("/long.md"),)).fetchone()[0]
        assert len(title) <= 300
        content = conn.execute("SELECT document_text(body) FROM documents WHERE url = ?", (site.url("/secret.md"),)).fetchone()[0]
        assert TOKEN not in content and "use it well" in content
        assert TOKEN not in Path(conn.execute("PRAGMA database_list").fetchone()[2]).read_bytes().decode("latin-1")


def test_refresh_marks_a_page_gone_and_keeps_a_forgotten_page_away(conn):
    from memhooks.store.projections import forget_document

    with Site() as site:
        site.page("/a.md", "# A\n\nalpha text\n")
        site.page("/b.md", "# B\n\nbeta text\n")
        site.page("/llms.txt", "# G\n\n## Docs\n- [A](/a.md)\n- [B](/b.md)\n")
        sources_mod.add(conn, site.url("/llms.txt"), limits=_limits())
        del site.pages["/a.md"]
        doc_b = conn.execute("SELECT document_id FROM sources WHERE url = ?", (site.url("/b.md"),)).fetchone()[0]
        conn.execute("BEGIN")
        forget_document(conn, doc_b)
        conn.execute("COMMIT")
        site.reset_counts()
        run = sources_mod.refresh(conn, limits=_limits())
        out = {v.url.rsplit("/", 1)[1]: v.outcome for v in run.visits}
        assert out == {"llms.txt": "not-modified", "a.md": "gone", "b.md": "forgotten"}
        assert site.requests["/b.md"] == 0
        assert conn.execute("SELECT status FROM sources WHERE url = ?", (site.url("/a.md"),)).fetchone() == ("gone",)
        assert conn.execute("SELECT status, title, document_id FROM sources WHERE url = ?",
                            (site.url("/b.md"),)).fetchone() == ("forgotten", None, None)


def test_refresh_older_than_checks_only_what_is_due(conn):
    with Site() as site:
        site.page("/a.md", "# A\n\nalpha\n")
        site.page("/llms.txt", "# O\n\n## Docs\n- [A](/a.md)\n")
        sources_mod.add(conn, site.url("/llms.txt"), limits=_limits())
        site.reset_counts()
        run = sources_mod.refresh(conn, older_than_s=3600, limits=_limits())
        assert run.visits == [] and site.requests == {}
        run = sources_mod.refresh(conn, older_than_s=3600, limits=_limits(), now=time.time() + 7200)
        assert run.outcomes() == {"not-modified": 2}


def test_a_reindex_keeps_added_pages(store, conn):
    with Site() as site:
        site.page("/a.md", "# A\n\nalpha text for the reindex\n")
        sources_mod.add(conn, site.url("/a.md"), limits=_limits())
    _cli("reindex")
    assert db_rows(store, "SELECT count(*) FROM sources s JOIN documents d ON d.id = s.document_id") == [(1,)]
    assert _json("search", "reindex")["count"] == 1


# ----------------------------------------------------------------------------- parsing, linear time

SIZE = 2 * MIB
BOUND_S_PER_MIB = 1.0


def _per_mib(fn, text) -> float:
    best = None
    for _ in range(2):
        start = time.perf_counter()
        fn(text)
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    assert best is not None
    return best / (len(text) / MIB)


def _fill(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


WORST = {
    "llms-links": "- [a](/x):",
    "llms-open-brackets": "- [[[[[[[[",
    "llms-no-close": "- [a](" + "b" * 100,
    "llms-one-line": "- [" + "a](" * 10,
    "html-open-tags": "<",
    "html-comments": "<!--",
    "html-scripts": "<script>",
    "html-scripts-closed": "<script></script>",
    "html-entities": "&amp;&#x41;&lt",
    "html-headings": "<h1><h2><li><pre>",
    "html-self-closing": "<svg/>",
    "markdown-fences": "```\n# t\n",
    "html-structured": "<h1>" + "a" * 40,  # under MAX_TAGS: read tag by tag
    "html-pre-lines": "<pre>" + " \n" * 50,
    "html-spaces": "<p>" + " " * 400,
    "llms-newlines": "\n",
}


@pytest.mark.parametrize("name", sorted(WORST))
def test_parsers_are_linear_on_2_mib_worst_cases(name):
    text = _fill(WORST[name])
    for fn in (lambda t: pages.parse_llms_txt(t, "https://x.test/llms.txt"),
               pages.html_to_text, pages.markdown_title,
               lambda t: pages.page_document(t.encode(), "text/html", "https://x.test/")):
        assert _per_mib(fn, text) < BOUND_S_PER_MIB, name


def test_checked_url_keeps_http_only():
    ok = {"HTTP://Example.COM:80/a#frag": "http://example.com/a", "https://x.test": "https://x.test/",
          "https://x.test:8443/a?b=c": "https://x.test:8443/a?b=c"}
    for raw, want in ok.items():
        assert pages.checked_url(raw) == want
    for raw in ("file:///etc/passwd", "data:,x", "javascript:x", "ftp://x.test/", "https://u:p@x.test/",
                "https://x.test/a b", "https://x.test/\x00", "https://x.test:99999/", "//x.test/a",
                "https://" + "a" * 5000, "https://x.test/a\u2028b"):
        assert pages.checked_url(raw) is None, raw
    assert pages.checked_url("//evil.test/a", "https://x.test/llms.txt") == "https://evil.test/a"
    assert not pages.same_site("https://evil.test/a", "https://x.test")
    assert not pages.same_site("http://x.test/a", "https://x.test")
    assert not pages.same_site("https://x.test:8443/a", "https://x.test")


# ----------------------------------------------------------------------------- admission, this door

def test_add_admits_honest_pages_and_nothing_hostile(store, conn):
    """The rows tests/test_admission.py plants at every door, served as pages: secrets are
    redacted, error pages and interstitials refused, fence look-alike titles dropped."""
    from test_admission import (
        CF_PAGE,
        EXA_EMPTY,
        FENCES,
        HONEST_DOC,
        NETRC,
        RATE_LIMITED,
        SECRETS,
        assert_clean,
    )

    with Site() as site:
        site.page("/honest.md", HONEST_DOC)
        site.page("/secrets.md", f"# Keys\n\ntoken {SECRETS[0]}\nkey {SECRETS[1]}\n\n{NETRC}\nthe rest is docs\n")
        site.page("/cf.html", CF_PAGE, "text/html")
        site.page("/rate.txt", RATE_LIMITED, "text/plain")
        site.page("/empty.txt", EXA_EMPTY, "text/plain")
        site.page("/503.txt", "Error: Request failed with status code 503", "text/plain")
        lines = ["# Hostile", "", "## Docs", "- [Honest](/honest.md)", "- [Secrets](/secrets.md)",
                 "- [Check](/cf.html)", "- [Rate](/rate.txt)", "- [Empty](/empty.txt)", "- [503](/503.txt)"]
        for i, fence in enumerate(FENCES):
            site.page(f"/fence{i}.md", f"# Page {i}\n\nplain text {i}\n")
            lines.append(f"- [{fence}](/fence{i}.md)")
        site.page("/llms.txt", "\n".join(lines) + "\n")
        run = sources_mod.add(conn, site.url("/llms.txt"), library_id="/honest/lib", version="1.0",
                              limits=_limits())
    out = {v.url.rsplit("/", 1)[1]: v.outcome for v in run.visits}
    assert out["honest.md"] == out["secrets.md"] == out["llms.txt"] == "new"
    assert all(out[n] == "refused" for n in ("cf.html", "rate.txt", "empty.txt", "503.txt")), out
    assert all(out[f"fence{i}.md"] == "new" for i in range(len(FENCES)))
    counts = assert_clean(store)
    assert counts["documents"] == 3 + len(FENCES)
    assert db_rows(store, "SELECT DISTINCT provenance FROM documents") == [("added",)]
    refused = db_rows(store, "SELECT url, error FROM sources WHERE status = 'refused'")
    assert len(refused) == 4 and all(e.startswith("not a document") for _u, e in refused), refused
    titles = [t for (t,) in db_rows(store, "SELECT title FROM sources")]
    assert not [t for t in titles if t and ("reference" in t.lower() or t.startswith(("```", "</")))]
