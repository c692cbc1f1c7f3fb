"""The PostToolUse / PostToolUseFailure hook: journal the raw payload first (nothing is lost),
start the detached ingester, then answer a failed live call from the store when it can
(memhooks.recall.failure triages, memhooks.recall.fallback answers): one JSON object on stdout, or nothing. Exit 0 always.

A Bash call (the matcher lets every one through) is journaled only when its command is a
Context7 CLI lookup (`ctx7 library|docs …`, memhooks.ctx7_command), and a failed `ctx7 docs`
is answered as Context7's query-docs would be; any other Bash call is never journaled and
gets no answer, and one whose raw payload lacks the bytes `ctx7` exits at that byte check,
before any parse and before the capture path's modules load
(memhooks.entry._capture)."""

from memhooks.config import MAX_EVENT_BYTES
from memhooks.entry._boundary import guard
from memhooks.entry._input import bash_call, read_stdin

NAME = "post-tool-use"


def _run() -> int:
    raw, total = read_stdin(MAX_EVENT_BYTES)
    if bash_call(raw) and b"ctx7" not in raw:
        return 0  # any other Bash command: not journaled, no answer, nothing more loaded
    from memhooks.entry import _capture  # the capture path: journal, ingester, fallback

    return _capture.run(raw, total)


def main(args=()) -> int:
    return guard(NAME, _run)
