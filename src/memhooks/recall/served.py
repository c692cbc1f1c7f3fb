"""An answer from the store and the text it is given in (standard library only; hot paths).

`Served` holds what the serve decision found (memhooks.recall.serve): what it is, when it
was captured, what it was captured for, and the stored text. Two doors hand it out:
PreToolUse serves it in place of a call (`Served.text`), and PostToolUse gives it as a
fallback when the live call failed (memhooks.recall.fallback, `fallback_text`). Stored text
is always fenced (memhooks.egress); values in a header line pass `q` (their checked one-line
form, quoted).
"""

from memhooks.config import number, switched_off
from memhooks.egress import REFERENCE_NOTE, clean, fence, quote


def num(name: str, default: float) -> float:
    """A number >= 0 from the setting `name` (the environment, else the settings file)."""
    return number(name, default)


def off(name: str) -> bool:
    return switched_off(name)


def s(value, limit: int = 2000) -> str:
    return value.strip() if isinstance(value, str) and len(value) <= limit else ""


def q(text, limit: int = 160) -> str:
    """A value in a header: quoted by egress's one quoting function."""
    return quote(text, limit)


def served_head(what: str, when: str, asked: str) -> str:
    return (f"[memhooks cache] Answered from the local memhooks cache, not by the live tool (this is "
            f"not an error): {what}, captured {when} {asked}. For a live answer, repeat this identical call.")


CUT_NOTE = "\n[memhooks: cut here; repeat the call for the full text]"


def wrap(head: str, body: str, max_chars: int, cut_note: str = CUT_NOTE) -> str:
    """The header, the reference-only note and the stored body in the fence (cut at max_chars)."""
    if len(body) > max_chars:
        body = body[:max_chars].rstrip() + cut_note
    return f"{clean(head)}\n{REFERENCE_NOTE}\n{fence(body)}"


class Served:
    """What the store can answer one call with. `when` is the capture time in words, `asked`
    what it was captured for (values already quoted by `q`), `at` the oldest capture time
    used (epoch seconds), `live_bytes` what the live call would have brought (for stats)."""

    def __init__(self, kind: str, what: str, when: str, asked: str, body: str, max_chars: int,
                 doc_ids=(), library_id=None, live_bytes=0, at: float | None = None):
        self.kind, self.what, self.when, self.asked = kind, what, when, asked
        self.body, self.max_chars, self.doc_ids = body, max_chars, list(doc_ids)
        self.library_id, self.live_bytes, self.at = library_id, live_bytes, at
        self._text: str | None = None

    @property
    def text(self) -> str:
        """As PreToolUse serves it, in place of the call."""
        if self._text is None:
            self._text = wrap(served_head(self.what, self.when, self.asked), self.body, self.max_chars)
        return self._text
