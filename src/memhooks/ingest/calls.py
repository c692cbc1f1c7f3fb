"""One journaled tool call as the per-provider tally counts it: which provider it went to
(memhooks.providers) and, when the live call failed, why (an error family of
memhooks.classify: `rate limited`, `quota exceeded`, `unauthorized`, `http error`, `network
error`, or `tool error` / `empty answer`). Pure: no SQL, no IO.

A failure is what the tool reported or one of the tools' own whole error forms
(`classify.live_failure`, the fallback's question): a PostToolUseFailure event (not a user
interrupt), an MCP result marked `isError`, WebFetch's 429 or 5xx, an empty answer, or for the
ctx7 CLI its `✖` message. An answer that merely speaks of limits is an answer.
"""

from __future__ import annotations

from typing import Any

from memhooks import classify, providers
from memhooks.ingest.adapters import context7
from memhooks.ingest.adapters.ctx7_cli import cli_message, stdout_text
from memhooks.ingest.adapters.text import response_text

#: failures that say the provider's budget is spent
RATE_LIMITS = frozenset({classify.RATE_LIMITED, classify.QUOTA})
MAX_TEXT = 64 * 1024  # what the checks look at (every error form is far shorter)
_CONTEXT7_REASONS = {"rate limited": classify.RATE_LIMITED, "unauthorized": classify.UNAUTHORIZED}


def call_of(event: Any) -> tuple[str, str | None] | None:
    """(provider, failure or None) of a PostToolUse / PostToolUseFailure event, or None when
    it is no call to a provider memhooks counts."""
    if not isinstance(event, dict) or event.get("hook_event_name") not in ("PostToolUse",
                                                                           "PostToolUseFailure"):
        return None
    tool_name = event.get("tool_name")
    provider = providers.of_tool(tool_name, event.get("tool_input"))
    if provider is None:
        return None
    return provider, failure_of(event, tool_name == "Bash")


def _cli_failure(text: str) -> str | None:
    """The ctx7 CLI's output (or the Bash tool's error text): its `✖` message's family."""
    first, _, rest = text.strip().partition("\n")
    if first.lower().startswith("exit code "):  # PostToolUseFailure: "Exit code 1\n<output>"
        text = rest
    message = cli_message(text)
    if message is None or message[0] != "error":
        return None
    said = message[1][:2000]
    reason = context7.error_reason(said)
    return _CONTEXT7_REASONS.get(reason or "") or classify.live_failure(said) or "tool error"


def failure_of(event: dict, bash: bool = False) -> str | None:
    """Why the live call of one event failed, or None when it answered (or the user
    interrupted it)."""
    response = event.get("tool_response")
    if event.get("hook_event_name") == "PostToolUseFailure":
        if event.get("is_interrupt") is True:
            return None
        error = event.get("error")
        text = error[:MAX_TEXT] if isinstance(error, str) else ""
        if bash:
            return _cli_failure(text) or "tool error"
        return classify.live_failure(text) or "tool error"
    if bash:
        if isinstance(response, dict) and response.get("interrupted") is True:
            return None
        return _cli_failure(stdout_text(response)[:MAX_TEXT])
    if isinstance(response, dict):
        code = response.get("code")
        if isinstance(code, int) and not isinstance(code, bool):
            if code == 429:
                return classify.RATE_LIMITED
            if 500 <= code <= 599:
                return classify.HTTP_ERROR
        if "result" in response or "results" in response:  # WebFetch's and WebSearch's objects
            result = response.get("result")
            text = result[:MAX_TEXT] if isinstance(result, str) else ""
            return classify.live_failure(text) if text.strip() else None
    text = response_text(response)[:MAX_TEXT]
    marked = isinstance(response, dict) and response.get("isError") is True
    if not text.strip():
        return "tool error" if marked else "empty answer"
    return classify.live_failure(text) or ("tool error" if marked else None)
