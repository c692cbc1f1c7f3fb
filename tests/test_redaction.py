"""Secrets never reach disk: every planted family is redacted in text, in raw hook bytes
(JSON-escaped, also twice) and in every stored column; look-alikes come through unchanged."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import BIN, db_rows, ingest, load_payload, run, run_hook, wait_idle

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "corpora"))
from planted_secrets import FALSE_POSITIVES, PLANTED

from memhooks.redact import redact_bytes, redact_text

CASES = [(fam, tpl.format(s=s), s) for fam, tpl, s in PLANTED]


def _wraps(text: str):
    yield "plain", text
    yield "json", json.dumps({"text": text})
    yield "json-lines", json.dumps({"text": "intro\n" + text + "\nmore"})
    yield "json-twice", json.dumps({"text": json.dumps({"inner": text})})


def _leaks(secret: str, out: str) -> bool:
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(json.dumps(secret)[1:-1])[1:-1]}
    return any(f in out for f in forms)


@pytest.mark.parametrize("family, text, secret", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_planted_secret_is_redacted_in_text_and_raw_bytes(family, text, secret):
    for label, form in _wraps(text):
        out_text = redact_text(form)
        out_bytes = redact_bytes(form.encode()).decode()
        assert not _leaks(secret, out_text), (label, out_text)
        assert not _leaks(secret, out_bytes), (label, out_bytes)
        assert "[REDACTED]" in out_bytes
        if label != "plain":
            json.loads(out_bytes)  # redacting raw JSON keeps it valid JSON


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_look_alikes_come_through_unchanged(text):
    assert redact_text(text) == text
    for _label, form in _wraps(text):
        assert redact_bytes(form.encode()).decode() == form
        assert redact_text(form) == form


def test_bytes_and_text_agree_on_json_escaped_payloads():
    for _family, text, _secret in CASES:
        raw = json.dumps({"tool_response": [{"type": "text", "text": "x\n" + text}]})
        assert json.loads(redact_bytes(raw.encode())) == json.loads(redact_text(raw))


def test_rates_by_family(capsys):
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for family, text, secret in CASES:
        total[family] += 1
        caught[family] += not _leaks(secret, redact_bytes(json.dumps({"t": text}).encode()).decode())
    fps = sum(redact_text(t) != t for t in FALSE_POSITIVES)
    with capsys.disabled():
        print(f"\nplanted kinds caught: {sum(caught.values())}/{sum(total.values())} "
              f"across {len(total)} families; false positives: {fps}/{len(FALSE_POSITIVES)}")
    assert caught == total and fps == 0


def test_clean_text_compiles_no_rule():
    """Clean text is let through by the trigger prefilter: no rule's pattern is compiled."""
    probe = ("import sys\n"
             "from memhooks import redact\n"
             "from memhooks.redact import redact_bytes\n"
             "data = open(sys.argv[1], 'rb').read()\n"
             "assert redact_bytes(data) == data\n"
             "print(len(redact._compiled))")
    import subprocess
    import tempfile
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from capture import payload

    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        fh.write(payload())
    try:
        r = subprocess.run([sys.executable, "-I", "-S", "-c",
                            f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent.parent / 'src')!r})\n" + probe,
                            fh.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(fh.name)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"


def _all_bytes(store) -> bytes:
    raw = b""
    for path in Path(store).parent.rglob("*"):
        if path.is_file():
            raw += path.read_bytes()
    return raw


def test_secrets_in_url_title_metadata_and_journal_never_reach_disk(store):
    secrets = [s for _f, _t, s in CASES]
    body = "### Config\n\nSource: https://docs.example.org\n\n```env\n" + "\n".join(t for _f, t, _s in CASES) + "\n```\n"
    c7 = load_payload("c7_query_docs")
    c7["tool_input"]["query"] = "connect with sk_live_4eC39HqLyjWDarjtT1zdp7dc"
    c7["tool_response"] = [{"type": "text", "text": body}]
    page = "# Deploy\nURL: https://deploy:HttpsPw42x@git.example.org/o/r.git?token=ghp_" + "Zx9Qm2Lr7Kp4Vt8Nw3Hs6Jd1Fg5Bc0Ya2Ue7" \
        + "\n\nDeploy notes.\n" + body
    exa = {"session_id": "s", "hook_event_name": "PostToolUse", "cwd": "/tmp", "tool_use_id": "t2",
           "tool_name": "mcp__exa__web_fetch_exa", "tool_input": {"urls": ["https://x"]},
           "tool_response": [{"type": "text", "text": page}]}
    fetch = load_payload("webfetch")
    fetch["tool_input"]["url"] = "https://admin:Pg5ecret!x@internal.example.org/page?api_key=hunter2secretvalue"
    fetch["tool_input"]["prompt"] = "log in with DB_PASSWORD=hunter2-Prod! and summarise"
    fetch["tool_response"]["result"] = "The page explains deployment. " + body
    for event in (c7, exa, fetch):
        assert run_hook("post-tool-use", event).returncode == 0
    wait_idle(store)
    ingest(store)
    docs = db_rows(store, "SELECT url, title, metadata, document_text(body), source, topic FROM documents")
    assert len(docs) >= 3
    raw = _all_bytes(store)
    for secret in secrets + ["HttpsPw42x", "Pg5ecret!x", "hunter2secretvalue", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"]:
        assert secret.encode() not in raw, secret
    assert db_rows(store, "PRAGMA integrity_check") == [("ok",)]


def test_lc_cache_write_body_is_redacted(store, tmp_path):
    body = tmp_path / "body.md"
    body.write_text("### Setup\n\n```env\n" + "\n".join(t for _f, t, _s in CASES) + "\n```\n")
    r = run(["bash", str(BIN / "lc-cache-write"), "tier2", "/acme/app", "setup", str(body)])
    assert r.returncode == 0
    raw = _all_bytes(store)
    assert raw, "nothing was written"
    for _f, _t, secret in CASES:
        assert secret.encode() not in raw, secret
    content = db_rows(store, "SELECT document_text(body) FROM documents")[0][0]
    assert "[REDACTED]" in content
