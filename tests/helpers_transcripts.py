"""Synthetic Claude Code transcripts of any size, in the shape the real CLI writes
(tests/fixtures/transcripts/*.jsonl, recorded by tests/e2e/record_transcripts.py).

Used by tests/test_import_transcripts.py and benchmarks/import_transcripts.py.
Each round writes a user prompt, filler lines (attachments, an API request record, a Bash
call and result that memhooks ignores), and every `captured_every` rounds one captured call
(Context7 query-docs, WebFetch or EXA, in turn) with its result and structured
``toolUseResult``. Document texts are unique per call, so every capture is a new document.
"""

from __future__ import annotations

import json
import random
import string

SESSION = "5b1c9a8e-0000-4000-8000-00000000synt"
CWD = "/home/user/code/synthetic-app"


def _line(obj: dict) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def _common(i: int, ts: str) -> dict:
    return {"parentUuid": f"p-{i}", "isSidechain": False, "uuid": f"u-{i}", "timestamp": ts,
            "userType": "external", "entrypoint": "cli", "cwd": CWD, "sessionId": SESSION,
            "version": "2.1.332", "gitBranch": "main"}


def _words(rng: random.Random, n: int) -> str:
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(n))


def captured_pair(i: int, rng: random.Random, ts: str, doc_words: int = 600) -> list[bytes]:
    tid = f"toolu_synth_{i:08d}"
    kind = i % 3
    structured: list | dict  # the tool's result as the transcript records it
    content: list | str  # what the model saw
    if kind == 0:
        name, inp = "mcp__context7__query-docs", {"libraryId": f"/org/lib{i}", "query": "setup"}
        text = f"### Setup of lib{i}\n\nSource: https://docs.invalid/lib{i}\n\n{_words(rng, doc_words)}\n"
        structured = [{"type": "text", "text": text}]
        content = structured
    elif kind == 1:
        url = f"https://docs.invalid/page/{i}"
        name, inp = "WebFetch", {"url": url, "prompt": "summarise"}
        text = f"Summary of page {i}: {_words(rng, doc_words)}"
        structured = {"bytes": len(text) * 3, "code": 200, "codeText": "OK", "result": text,
                      "durationMs": 120, "url": url}
        content = text
    else:
        name, inp = "mcp__exa__web_search_exa", {"query": f"topic {i}"}
        text = (f"Title: Result {i}\nURL: https://exa.invalid/{i}\nPublished: 2024-01-01\n"
                f"Author: A\nText: {_words(rng, doc_words)}")
        structured = [{"type": "text", "text": text}]
        content = structured
    use = {**_common(i * 10 + 1, ts), "type": "assistant",
           "message": {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "m",
                       "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}]}}
    res = {**_common(i * 10 + 2, ts), "type": "user",
           "message": {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                     "content": content}]},
           "toolUseResult": structured}
    return [_line(use), _line(res)]


def filler(i: int, rng: random.Random, ts: str, size: int) -> list[bytes]:
    blob = "x" * max(0, size)
    tid = f"toolu_bash_{i:08d}"
    return [
        _line({**_common(i * 10 + 3, ts), "type": "user",
               "message": {"role": "user", "content": f"prompt {i}: {_words(rng, 12)}"}}),
        _line({**_common(i * 10 + 4, ts), "type": "attachment",
               "attachment": {"type": "prompt_snapshot", "systemPrompt": blob}}),
        _line({"type": "api-request", "sessionId": SESSION, "id": f"r{i}", "timestamp": ts,
               "params": {"model": "m", "max_tokens": 1000}}),
        _line({**_common(i * 10 + 5, ts), "type": "assistant",
               "message": {"role": "assistant", "content": [
                   {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "ls"}}]}}),
        _line({**_common(i * 10 + 6, ts), "type": "user",
               "message": {"role": "user", "content": [
                   {"tool_use_id": tid, "type": "tool_result", "content": "a\nb"}]},
               "toolUseResult": {"stdout": "a\nb", "stderr": "", "interrupted": False}}),
    ]


def write_synthetic(path, megabytes: float, *, captured_every: int = 1, filler_bytes: int = 20_000,
                    doc_words: int = 600, seed: int = 7) -> dict:
    """Write a transcript of about `megabytes` MB. Returns {"bytes", "captured", "rounds"}."""
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    written = captured = rounds = 0
    with open(path, "wb") as fh:
        while written < target:
            ts = f"2026-11-{1 + rounds % 28:02d}T10:{rounds % 60:02d}:00.000Z"
            lines = filler(rounds, rng, ts, filler_bytes)
            if rounds % captured_every == 0:
                lines += captured_pair(rounds, rng, ts, doc_words)
                captured += 1
            for ln in lines:
                fh.write(ln)
                written += len(ln)
            rounds += 1
    return {"bytes": written, "captured": captured, "rounds": rounds}
