"""Large generated library documents for the serve budget (tests/test_serve_budget.py and
benchmarks/serve.py).

A document is Context7-shaped markdown: `### Title` snippets with a Source line, prose
and a fenced code block, joined by Context7's dashed separators, about 16 MiB. The
words are pronounceable made-up words (about 20,000, Zipf-distributed, so a few are
everywhere and most are rare: the FTS index and the word search are not trivial) with
English function words mixed in. A few "topic" snippets in real English are planted deep
inside each document (past its first half), so a query about them can only be answered
from the middle of a large document.

The made-up words avoid the redaction rules' trigger substrings ("key", "pass", "sig",
...): building four 16 MiB documents then takes seconds, not minutes (redaction is not
what is measured here).
"""

from __future__ import annotations

import random
import time

SEP = "\n\n--------------------------------\n\n"
LIBRARY = "/bigorg/biglib"
MiB = 1024 * 1024
_AVOID = ("key", "pass", "secret", "token", "auth", "cred", "sig", "dsn", "sas", "pw", "curl",
          "bearer", "basic", "eyj", "aiza")


def _avoid() -> tuple[str, ...]:
    """Every trigger substring of the redaction rules made of letters, and _AVOID."""
    from memhooks.redact_rules import RULES

    found = set(_AVOID)
    for rule in RULES:
        for t in rule[2]:
            for part in (t if isinstance(t, tuple) else (t,)):
                part = part.decode() if isinstance(part, bytes) else part
                if part.isalpha():
                    found.add(part.lower())
    return tuple(sorted(found))
_FUNCTION = ("the", "a", "to", "of", "and", "in", "is", "for", "with", "on", "by", "this", "that",
             "when", "from", "it", "as", "an", "be", "or")

# Planted snippets: (topic, body). Their words are English words the made-up vocabulary
# does not produce (it has no "w" or "x", and no word of these shapes).
TOPICS = (
    ("exponential backoff",
     "### Retry with exponential backoff and jitter\n\nSource: https://docs.invalid/retry\n\n"
     "Failed requests are retried with exponential backoff. Jitter spreads the retries so "
     "that clients do not reconnect together.\n\n```js\nclient.retry({ backoff: 'exponential',"
     " jitter: true, maxRetries: 5 })\n```"),
    ("webhook verification",
     "### Verifying webhook payloads\n\nSource: https://docs.invalid/webhooks\n\nEvery webhook"
     " request carries an HMAC header. Verify the header against the raw request body before"
     " parsing the JSON.\n\n```js\nverifyWebhook(rawBody, header)\n```"),
    ("streaming responses",
     "### Streaming responses with chunked transfer\n\nSource: https://docs.invalid/stream\n\n"
     "Large responses are streamed in chunks. Iterate over the stream and flush each chunk to"
     " the browser as it arrives.\n\n```js\nfor await (const chunk of response.stream()) "
     "flush(chunk)\n```"),
    ("connection pooling",
     "### Connection pooling\n\nSource: https://docs.invalid/pool\n\nReuse connections from a"
     " pool. Set the pool size and an idle timeout so that unused connections are closed.\n\n"
     "```js\ncreatePool({ size: 10, idleTimeout: 30000 })\n```"),
)
HITS = ("exponential backoff with jitter for failed requests", "retry failed requests with jitter",
        "verify the webhook HMAC header against the raw body", "verifying webhook payloads",
        "stream large responses in chunks", "flush each chunk of a streamed response",
        "connection pool size and idle timeout", "close idle connections in the pool")
MISSES = ("websocket heartbeat interval", "oauth device flow polling", "graphql subscription resolvers",
          "kubernetes liveness probe")
# Every word is in the document, but no three snippets hold them all, or one word is absent.
NEAR_MISSES = ("exponential backoff for webhook streaming chunks in the pool",
               "retry jitter with a websocket", "verify the HMAC header of a kubernetes probe",
               "connection pool for graphql chunks")


def vocabulary(rng: random.Random, n: int = 20000) -> list[str]:
    onsets = ["b", "d", "f", "g", "h", "j", "l", "m", "n", "p", "r", "t", "v", "z", "br", "dr",
              "fl", "gr", "pl", "tr", "st", "ch", "th", "sh", "k", "s"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
    codas = ["", "", "", "n", "r", "l", "m", "s", "t", "nd", "rt"]
    avoid = _avoid()
    out: set[str] = set()
    while len(out) < n:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(1, 4)))
        word += rng.choice(codas)
        if 3 <= len(word) <= 14 and not any(a in word for a in avoid):
            out.add(word)
    words = sorted(out)
    rng.shuffle(words)
    return words


class Words:
    """Zipf-distributed draws from a vocabulary (rank r with probability about 1/r)."""

    def __init__(self, rng: random.Random, vocab: list[str]):
        self.rng, self.vocab, self.n = rng, vocab, len(vocab)

    def one(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            return _FUNCTION[int(len(_FUNCTION) * r / 0.3)]
        return self.vocab[int(self.n ** self.rng.random()) - 1]

    def line(self, n: int) -> str:
        return " ".join(self.one() for _ in range(n))


def snippet(w: Words, n: int) -> str:
    rng = w.rng
    title = w.line(rng.randint(3, 6)).title()
    prose = "\n\n".join(w.line(rng.randint(20, 60)) + "." for _ in range(rng.randint(1, 3)))
    code = "\n".join(f"const {w.one()}{i} = {w.one()}.{w.one()}({w.one()}, {rng.randint(0, 999)});"
                     for i in range(rng.randint(2, 8)))
    return (f"### {title}\n\nSource: https://docs.invalid/{w.one()}/{n}\n\n{prose}\n\n"
            f"```js\n{code}\n```")


_POOLS: dict = {}


def _pool(size: int) -> tuple[Words, list[str]]:
    """`size` generated snippets (made once per size, shared by every document)."""
    if size not in _POOLS:
        if "vocab" not in _POOLS:
            _POOLS["vocab"] = vocabulary(random.Random(1))
        w = Words(random.Random(size), _POOLS["vocab"])
        _POOLS[size] = (w, [snippet(w, i) for i in range(size)])
    return _POOLS[size]


def filler(seed: int, target_bytes: int, pool_size: int = 3000) -> list[str]:
    """Generated snippets (each made its own by a numbered title word) of about
    `target_bytes` in all, joined with SEP."""
    rng = random.Random(seed)
    w, pool = _pool(pool_size)
    parts: list[str] = []
    size, n = 0, 0
    while True:
        s = pool[rng.randrange(pool_size)].replace("### ", f"### {w.vocab[rng.randrange(w.n)].title()} {seed}.{n} ", 1)
        if size + len(s) + len(SEP) > target_bytes:
            return parts
        parts.append(s)
        size += len(s) + len(SEP)
        n += 1


def document(seed: int, target_bytes: int = 16 * MiB - 4096, pool_size: int = 3000,
             topics=TOPICS, sep: str = SEP) -> str:
    """One Context7-shaped document of at most `target_bytes` UTF-8 bytes (ASCII), with
    `topics` planted after its first half (with `sep` "\n\n": headings alone part it)."""
    rng = random.Random(seed)
    parts = filler(seed, target_bytes - sum(len(body) + len(sep) for _, body in topics), pool_size)
    for frac, (_, body) in zip(sorted(rng.uniform(0.55, 0.95) for _ in topics), topics, strict=True):
        parts.insert(int(len(parts) * frac), body)
    return sep.join(parts)


def build(path: str, docs: int = 4, target_bytes: int = 16 * MiB - 4096, now: float | None = None,
          library_id: str = LIBRARY) -> list[int]:
    """A store at `path` whose library `library_id` holds `docs` generated documents (each
    also in tier2, fresh), stored by the projections' own writer with the byte cap raised to
    what `lc-cache-write` accepts (16 MiB). Returns the document ids."""
    from memhooks.store.connect import connect, transaction
    from memhooks.store.projections import upsert_document, upsert_tier2

    now = time.time() if now is None else now
    conn = connect(path)
    ids = []
    try:
        for i in range(docs):
            text = document(seed=100 + i, target_bytes=target_bytes)
            topic = f"{TOPICS[i % len(TOPICS)][0]} part {i}"
            with transaction(conn):
                did, _ = upsert_document(conn, provenance="manual", project="/p", source=library_id, source_tool="context7",
                                         content=text, library_id=library_id, topic=topic,
                                         tool="query-docs", max_bytes=16 * MiB, now=now)
                assert did is not None
                upsert_tier2(conn, provenance="manual", library_id=library_id, topic=topic, document_id=did, origin="write",
                             ttl_s=4 * 3600, now=now)
            ids.append(did)
    finally:
        conn.close()
    return ids
