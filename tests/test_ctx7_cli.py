"""Context7's CLI through Bash: the command parser (memhooks.ctx7_command), the adapter
(memhooks.ingest.adapters.ctx7_cli) on what the real `ctx7` 0.5.12 prints
(tests/fixtures/ctx7/, recorded by its record_outputs.py), and the hooks run as
subprocesses on Bash payloads in the shape the real Claude Code CLI sends them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from conftest import db_rows, ingest, run_hook, wait_idle
from memhooks.ctx7_command import MAX_COMMAND, parse, quote, split, with_library_id
from memhooks.ingest.adapters import route

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ctx7"
PHRASE = "heron cleanup ledger"  # in the fake API's React docs (tests/e2e/fake_api.py)


def out(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


# ----------------------------------------------------------------------------- the parser

ACCEPTED = [
    ("ctx7 library react", ("library", "react", "", False, None)),
    ('ctx7 library react "how to use hooks"', ("library", "react", "how to use hooks", False, None)),
    ("ctx7 library react --json", ("library", "react", "", True, None)),
    ('ctx7 docs /facebook/react "useEffect cleanup"', ("docs", "/facebook/react", "useEffect cleanup", False, None)),
    ("ctx7 docs '/facebook/react' 'useEffect cleanup' --json", ("docs", "/facebook/react", "useEffect cleanup", True, None)),
    ('ctx7 docs --json /facebook/react "q"', ("docs", "/facebook/react", "q", True, None)),
    ('npx ctx7 docs /facebook/react "q"', ("docs", "/facebook/react", "q", False, None)),
    ('npx -y ctx7@0.5.12 docs /vercel/next.js/v14.3.0 "app router"', ("docs", "/vercel/next.js/v14.3.0", "app router", False, None)),
    ("npx --yes ctx7@latest library zod", ("library", "zod", "", False, None)),
    ("bunx ctx7 library zod", ("library", "zod", "", False, None)),
    ("pnpm dlx ctx7 library zod", ("library", "zod", "", False, None)),
    ('ctx7 --base-url http://127.0.0.1:8787 docs /a/b "q"', ("docs", "/a/b", "q", False, "http://127.0.0.1:8787")),
    ('ctx7 docs /a/b "q" --base-url=https://c7.internal', ("docs", "/a/b", "q", False, "https://c7.internal")),
    ('CONTEXT7_API_KEY=x CTX7_TELEMETRY_DISABLED=1 ctx7 docs /a/b "q"', ("docs", "/a/b", "q", False, None)),
    ('./node_modules/.bin/ctx7 docs /a/b "q # not a comment"', ("docs", "/a/b", "q # not a comment", False, None)),
    ('ctx7 docs /a/b "a | b && c; d > e"', ("docs", "/a/b", "a | b && c; d > e", False, None)),
    ("ctx7 docs /a/b -- --json", ("docs", "/a/b", "--json", False, None)),
    ('ctx7 docs /a/b "|"', ("docs", "/a/b", "|", False, None)),
    ("ctx7 docs /a/b 'it'\\''s' --json", ("docs", "/a/b", "it's", True, None)),
    ('ctx7 docs /a/b "say \\"hi\\" \\\\ now"', ("docs", "/a/b", 'say "hi" \\ now', False, None)),
    ("ctx7 docs /a/b use\\ effect", ("docs", "/a/b", "use effect", False, None)),
    ("ctx7 docs /a/b 'q*?[{}]~#'", ("docs", "/a/b", "q*?[{}]~#", False, None)),
]

# Commands that merely look like a lookup: any other Bash command.
REFUSED = [
    "", "   ", "ctx7", "ctx7 library", "ctx7 docs /a/b", "ctx7 docs", "ctx7 --help", "ctx7 docs --help",
    "ctx7 -v", "ctx7 setup --claude", "ctx7 login", "ctx7 skills search react", "ctx7 library a b c",
    'ctx7 docs /a/b "q" extra', 'ctx7 docs /a/b ""', 'ctx7 library ""', "ctx7 --json library react",
    'ctx7 docs /a/b "q" --unknown', "ctx7 docs /a/b q --base-url", 'ctx7 --base-url "" docs /a/b q',
    "echo ctx7 docs /a/b x", "grep ctx7 docs", "cat ctx7.md", "ls ctx7", "ctx7x docs /a/b q", "xctx7 docs /a/b q",
    "npx ctx7x docs /a/b q", "npx ctx7@ docs /a/b q", "npx ctx7@1.0;rm docs /a/b q", "npx -p ctx7 docs /a/b q",
    "pnpm ctx7 docs /a/b q", "sudo ctx7 docs /a/b q", "env ctx7 docs /a/b q", "time ctx7 docs /a/b q",
    'ctx7 docs /a/b "q" | head', 'ctx7 docs /a/b "q"|head', 'ctx7 docs /a/b "q" && ls', 'ctx7 docs /a/b q&&ls',
    'ctx7 docs /a/b "q" || true', 'ctx7 docs /a/b "q"; ls', 'ctx7 docs /a/b q;ls', 'ctx7 docs /a/b "q" &',
    'ctx7 docs /a/b "q" > out.md', 'ctx7 docs /a/b "q">out.md', 'ctx7 docs /a/b "q" 2>&1', 'ctx7 docs /a/b q < in',
    '(ctx7 docs /a/b "q")', '{ ctx7 docs /a/b "q"; }', 'ctx7 docs /a/b "$(whoami)"', "ctx7 docs /a/b `id`",
    'ctx7 docs $LIB "q"', 'ctx7 docs /a/b "q"\nls', 'ls\nctx7 docs /a/b "q"', 'ctx7 docs /a/b "unclosed',
    "ctx7 docs /a/b q \\", 'cd /tmp && ctx7 docs /a/b "q"', "ctx7 docs /a/b 'q' # && ls" + "\r",
    "ctx7 docs /a/b q # comment", "ctx7 docs /a/b react*", "ctx7 docs /a/b q{1,2}", "ctx7 docs ~/a q",
    "ctx7 docs /a/b [q]", "ctx7 docs /a/b q?", "ctx7 docs /a/b q " + "x" * MAX_COMMAND, None, 42, ["ctx7", "docs"],
    "bash -c 'ctx7 docs /a/b q'", "sh -c \"ctx7 docs /a/b q\"", "npx ctx7 docs /a/b q | tee x",
    "FOO=1 echo ctx7 docs /a/b q", "1A=x ctx7 docs /a/b q",
]


@pytest.mark.parametrize(("command", "want"), ACCEPTED)
def test_a_ctx7_lookup_is_read_as_the_cli_reads_it(command, want):
    cmd = parse(command)
    assert cmd is not None, command
    assert (cmd.verb, cmd.target, cmd.query, cmd.json, cmd.base_url) == want


@pytest.mark.parametrize(("command", "want"), ACCEPTED)
def test_the_words_are_the_ones_shlex_splits(command, want):
    """The parser's own splitting (no `shlex`: it imports `re`, which hooks do not load)
    gives the words a POSIX shell (and shlex.split) gives, for every command it takes."""
    assert list(split(command) or []) == shlex.split(command)
    cmd = parse(command)
    assert cmd is not None and list(cmd.words) == shlex.split(command)


@pytest.mark.parametrize("word", ["react", "/facebook/react/v18.3.1", "", "it's", "a b", "$(id)", "x;y", "é", "--json"])
def test_words_are_quoted_as_shlex_quotes_them(word):
    assert quote(word) == shlex.quote(word)


@pytest.mark.parametrize("command", REFUSED)
def test_any_other_bash_command_is_not_a_lookup(command):
    assert parse(command) is None, command


def test_a_long_hostile_command_is_refused_whole():
    assert parse("ctx7 docs /a/b " + '"' * (MAX_COMMAND - 20)) is None
    assert parse("ctx7 docs /a/b " + "q " * 1000) is None  # too many arguments


def test_the_docs_command_is_rewritten_with_another_library_id():
    cmd = parse('NO_COLOR=1 npx -y ctx7@0.5.12 --base-url http://h:1 docs /facebook/react "use it; twice" --json')
    assert cmd is not None
    new = with_library_id(cmd, "/facebook/react/v18.3.1")
    assert new == ("NO_COLOR=1 npx -y ctx7@0.5.12 --base-url http://h:1 docs /facebook/react/v18.3.1 "
                   "'use it; twice' --json")
    again = parse(new)
    assert again is not None and (again.target, again.query, again.json, again.base_url) == (
        "/facebook/react/v18.3.1", "use it; twice", True, "http://h:1")
    assert shlex.split(new)[cmd.target_at] == "/facebook/react/v18.3.1"
    odd = with_library_id(cmd, "/a/b'; rm -rf ~ #")  # whatever the ID holds, it stays one word
    reread = parse(odd)
    assert reread is None or reread.target == "/a/b'; rm -rf ~ #"
    assert shlex.split(odd)[cmd.target_at] == "/a/b'; rm -rf ~ #"
    library = parse("ctx7 library react")
    assert library is not None
    with pytest.raises(ValueError):
        with_library_id(library, "/x/y")


# ----------------------------------------------------------------------------- the adapter

def event(name: str, hook: str = "PostToolUse", command: str | None = None) -> dict:
    """A Bash PostToolUse payload as Claude Code sends it, with a recorded ctx7 output."""
    o = out(name)
    return {"hook_event_name": hook, "tool_name": "Bash", "session_id": "s1", "cwd": "/tmp",
            "tool_use_id": f"toolu_{name}",
            "tool_input": {"command": command or o["command"], "description": "Context7 lookup"},
            "tool_response": {"stdout": o["stdout"], "stderr": o["stderr"], "interrupted": False,
                              "isImage": False, "noOutputExpected": False}}


@pytest.mark.parametrize("name", ["library_text", "library_json"])
def test_library_output_is_tier1_and_library_cards(name):
    r = route(event(name))
    assert r.skip_reason is None and r.source_tool == "context7"
    assert [(t.name, t.library_id, t.matched, t.versions) for t in r.tier1] == [
        ("react", "/facebook/react", "exact", ["v18.3.1", "v19.0.0"])]
    [lib] = r.libraries
    assert (lib.title, lib.code_snippets, lib.reputation, lib.benchmark_score) == ("React", 3200, "High", 91.5)
    [doc] = r.documents
    assert doc.type == "library-resolve" and doc.tool == "ctx7 library"
    assert doc.metadata["base_url"] == "http://127.0.0.1:8787"


@pytest.mark.parametrize("name", ["docs_text", "docs_json"])
def test_docs_output_is_a_document_and_tier2(name):
    r = route(event(name))
    assert r.skip_reason is None and r.source_tool == "context7"
    [doc] = r.documents
    assert (doc.library_id, doc.topic, doc.tool, doc.type) == ("/facebook/react", "useEffect cleanup",
                                                               "ctx7 docs", "library-docs")
    assert PHRASE in doc.content and "```js" in doc.content and doc.title == "useEffect cleanup function"
    assert [(t.library_id, t.topic) for t in r.tier2] == [("/facebook/react", "useEffect cleanup")]


def test_no_libraries_found_is_a_negative_entry():
    r = route(event("library_none"))
    assert [(t.name, t.library_id, t.matched) for t in r.tier1] == [("nosuchlib", None, "none")]
    assert r.documents == []


@pytest.mark.parametrize(("name", "reason"), [
    ("docs_none", "context7 error: no documentation"),
    ("docs_rate_limited", "context7 error: rate limited"),
    ("docs_redirected", "context7 error: library redirected"),
    ("docs_fetch_failed", "context7 error: request failed"),
    ("docs_invalid_id", "context7 error: request failed"),
])
def test_the_clis_own_messages_are_never_stored(name, reason):
    r = route(event(name))
    assert r.empty and r.skip_reason == reason, r


def test_a_failed_run_and_any_other_command_are_skipped():
    assert route(event("docs_fetch_failed", hook="PostToolUseFailure")).skip_reason == "tool failure"
    for command in ("echo ctx7 docs /facebook/react x", 'ctx7 docs /facebook/react "useEffect cleanup" | head'):
        assert route(event("docs_text", command=command)).skip_reason == "not a captured tool"
    coloured = event("docs_text")
    coloured["tool_response"]["stdout"] = "\x1b[1m" + coloured["tool_response"]["stdout"] + "\x1b[22m"
    assert "\x1b" not in route(coloured).documents[0].content


# ----------------------------------------------------------------------------- the hooks

DOCS = out("docs_text")["command"]


def pre(payload: dict, command: str | None = None) -> dict:
    p = {k: v for k, v in payload.items() if k != "tool_response"}
    p["hook_event_name"] = "PreToolUse"
    if command:
        p["tool_input"] = {"command": command, "description": "x"}
    return p


def failure(name: str) -> dict:
    p = {k: v for k, v in event(name).items() if k != "tool_response"}
    p.update(hook_event_name="PostToolUseFailure", is_interrupt=False,
             error="Exit code 1\n" + out(name)["stdout"])
    return p


def test_the_hooks_take_a_ctx7_lookup_and_leave_every_other_bash_call(store):
    others = ["ls -la", "echo ctx7 docs /facebook/react x", "cat ctx7.md", DOCS + " | head"]
    for command in others:  # nothing journaled, nothing printed
        post = event("docs_text", command=command)
        for proc in (run_hook("post-tool-use", post), run_hook("pre-tool-use", pre(post))):
            assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert not store.exists() or db_rows(store, "SELECT count(*) FROM events")[0][0] == 0

    for name in ("library_text", "docs_text"):
        proc = run_hook("post-tool-use", event(name))
        assert proc.returncode == 0 and proc.stdout == b""
    wait_idle(store)
    ingest(store)
    rows = db_rows(store, "SELECT tool_name, state FROM events ORDER BY id")
    assert rows == [("Bash", "done"), ("Bash", "done")], rows
    assert db_rows(store, "SELECT library_id FROM tier1 WHERE name_key = 'react'") == [("/facebook/react",)]
    assert db_rows(store, "SELECT library_id, topic, tool FROM documents WHERE type = 'library-docs'") == [
        ("/facebook/react", "useEffect cleanup", "ctx7 docs")]

    # the repeat is served (deny, the stored docs as the reason); other Bash calls are not
    proc = run_hook("pre-tool-use", pre(event("docs_text")))
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and PHRASE in answer["permissionDecisionReason"]
    assert answer["permissionDecisionReason"].startswith("[memhooks cache]")
    for command in others + ['npx -y ctx7@0.5.12 library react']:
        assert run_hook("pre-tool-use", pre(event("docs_text"), command)).stdout == b""
    assert db_rows(store, "SELECT outcome, tool, tool_name FROM serve_log") == [("served", "context7-docs", "Bash")]

    # a failed live run (exit 1) gets the stored docs beside its error
    proc = run_hook("post-tool-use", failure("docs_fetch_failed"))
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]
    assert ctx["hookEventName"] == "PostToolUseFailure"
    assert ctx["additionalContext"].startswith("[memhooks fallback] The live tool call failed (tool error")
    assert "fetch failed" in ctx["additionalContext"] and PHRASE in ctx["additionalContext"]
    # ... and an answer printed with exit 0 that is an error replaces its stdout, in Bash's shape
    limited = event("docs_text")
    limited["tool_response"]["stdout"] = "Rate limited or quota exceeded. Upgrade your plan at https://context7.com/plans for higher limits."
    proc = run_hook("post-tool-use", limited, env=None)
    new = json.loads(proc.stdout)["hookSpecificOutput"]["updatedToolOutput"]
    assert set(new) == {"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}
    assert new["stdout"].startswith("[memhooks fallback] The live tool call failed (rate limited") and PHRASE in new["stdout"]
    # an uncovered failure keeps the live error alone
    other = failure("docs_fetch_failed")
    other["tool_input"] = {"command": 'ctx7 docs /colinhacks/zod "refinements"'}
    assert run_hook("post-tool-use", other).stdout == b""
    wait_idle(store)
    assert db_rows(store, "SELECT tool, tool_name, field FROM fallback_log ORDER BY id") == [
        ("context7-docs", "Bash", "additionalContext"), ("context7-docs", "Bash", "updatedToolOutput")]
