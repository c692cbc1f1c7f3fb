"""`memhooks replay FILE.jsonl`: recorded hook payloads through the capture path."""

from __future__ import annotations

import json
import os
import sys

from memhooks.capture.payload import prepare
from memhooks.capture.tool_calls import metadata_only
from memhooks.config import MAX_EVENT_BYTES, db_path, project_dir
from memhooks.ingest.pipeline import ingest_pending
from memhooks.store.connect import closing, connect, transaction
from memhooks.store.journal import METADATA_ONLY, append


def _hook_name(raw: bytes) -> str | None:
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    name = event.get("hook_event_name") if isinstance(event, dict) else None
    return name if isinstance(name, str) else None


def replay_file(path: str) -> dict:
    """Journal each non-blank line as one hook event, then ingest. `-` reads stdin."""
    db = db_path()
    # Recorded payloads keep their own project (their cwd) unless one is named.
    project = project_dir() if os.environ.get("CLAUDE_PROJECT_DIR", "").strip() else None
    events = 0
    with closing(connect(db)) as conn:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")
        try:
            with transaction(conn):
                for line in stream:
                    if not line.strip():
                        continue
                    raw = line.rstrip(b"\r\n")
                    meta = metadata_only(raw[:MAX_EVENT_BYTES], len(raw), _hook_name(raw))
                    if meta is not None:  # a tool memhooks does not capture: metadata only
                        append(conn, meta, size=len(raw), project=project, error=METADATA_ONLY,
                               state="skipped")
                    else:
                        payload, error = prepare(raw[:MAX_EVENT_BYTES], len(raw))
                        append(conn, payload, size=len(raw), project=project, error=error)
                    events += 1
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
        report = ingest_pending(conn, db)
    return {"events": events, "done": report.done, "skipped": report.skipped,
            "failed": report.failed, "documents_created": report.documents_created}
