"""The optional hybrid ranking: `pip install memhooks[semantic]`, turned on with
MEMHOOKS_SEMANTIC=1 (off by default).

The model is WordLlama's `l2_supercat` at 256 dimensions (the `wordllama` package, MIT; its
weights, 16 MB, and tokenizer ship inside the wheel): a static embedding, the mean of token
vectors, fast on a CPU and loaded from the installed package only, never downloaded.
A section is embedded as its page title, heading path and the first `EMBED_BODY_CHARS`
characters of its text (what the section is about; a mean over a long text drifts towards
any page's average). Each section's vector (normalised, float32) is kept in
`section_vectors`; the sections that have none yet are embedded when a search needs them.

memhooks.recall.search reranks BM25's pages with it: a page's score is its BM25 rank,
as (k + 1) / (k + rank + 1), plus `BETA` times the cosine between the query and the
section BM25 chose for the page (`rerank`); a page BM25 did not find but whose section
is among the query's nearest competes with its cosine alone. BM25 decides the order
unless the embedding is clearly surer, so the words of the question keep their weight.

Without the extra (or with it turned off) `available()` is False and search is BM25 alone;
asked for but missing, it says so once in memhooks.log.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memhooks.log import log_error
from memhooks.store.connect import transaction

MODEL = "wordllama-l2_supercat-256-head300"  # the model, and what of a section it embeds
WEIGHTS = ("weights", "l2_supercat_256.safetensors")
TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
EMBED_BATCH = 256
MAX_EMBED_CHARS = 4000
EMBED_BODY_CHARS = 300  # of a section's text embedded after its title and headings

_STATE: dict = {}
_EXTRA: dict = {}


def extra() -> dict:
    """The optional extra's modules (numpy, safetensors, tokenizers, wordllama), imported on
    first use only (they take about half a second); {} when it is not installed."""
    if "loaded" not in _EXTRA:
        _EXTRA["loaded"] = True
        try:
            import numpy, safetensors, tokenizers, wordllama.inference  # one optional spot
        except ImportError:
            pass
        else:
            _EXTRA.update(np=numpy, safetensors=safetensors, tokenizers=tokenizers, wordllama=wordllama)
    return _EXTRA if "np" in _EXTRA else {}


def wanted() -> bool:
    return os.environ.get("MEMHOOKS_SEMANTIC", "").strip().lower() in ("1", "true", "yes", "on")


def model():
    """The embedding model from the installed package, or None (extra missing: logged once)."""
    if "model" in _STATE:
        return _STATE["model"]
    found = None
    mods = extra()
    if not mods:
        log_error("semantic search asked for (MEMHOOKS_SEMANTIC) but the extra is not installed: "
                  "pip install 'memhooks[semantic]'; searching with BM25 alone")
    else:
        try:
            wl = mods["wordllama"]
            root = Path(wl.__file__).parent
            with mods["safetensors"].safe_open(str(root.joinpath(*WEIGHTS)), framework="np", device="cpu") as fh:
                table = fh.get_tensor("embedding.weight")
            tokenizer = mods["tokenizers"].Tokenizer.from_file(str(root.joinpath(*TOKENIZER)))
            found = wl.inference.WordLlamaInference(table, tokenizer)
        except Exception as exc:  # noqa: BLE001 - a broken extra degrades to BM25
            log_error(f"semantic search: the model did not load ({type(exc).__name__}: {exc}); "
                      "searching with BM25 alone")
            found = None
    _STATE["model"] = found
    return found


def available() -> bool:
    return wanted() and model() is not None


def embed(texts: list[str]):
    """Normalised float32 vectors of `texts` (rows)."""
    np = extra()["np"]
    vecs = np.asarray(model().embed([t[:MAX_EMBED_CHARS] for t in texts]), dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms == 0, 1, norms)


def section_text(title, headings, body) -> str:
    """What of a section is embedded: page title, heading path, the start of its text."""
    return f"{title or ''} {headings or ''} {(body or '')[:EMBED_BODY_CHARS]}"


def _version(conn) -> tuple:
    """Changes when anything commits to the store: another connection (data_version), this
    one (total_changes), or the sections themselves (a new connection's counters start over)."""
    return (id(conn), conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes,
            *conn.execute("SELECT count(*), max(id) FROM sections").fetchone())


def ensure_vectors(conn) -> int:
    """Embed and keep the sections that have no vector of this model yet; how many."""
    missing = [r[0] for r in conn.execute(
        "SELECT s.id FROM sections s LEFT JOIN section_vectors v ON v.section_id = s.id AND v.model = ?"
        " WHERE v.section_id IS NULL ORDER BY s.id", (MODEL,))]
    done = 0
    for start in range(0, len(missing), EMBED_BATCH):
        made, kept = _embed_and_keep(conn, missing[start:start + EMBED_BATCH])
        if not kept:
            return done
        done += len(made)
    return done


def _embed_and_keep(conn, ids: list[int]) -> tuple[dict[int, bytes], bool]:
    """Embed these sections ({section id: float32 bytes}) and keep their vectors; whether
    they were kept (a store that refuses the write is logged once, the vectors still used)."""
    rows = conn.execute(f"SELECT id, title, headings, body FROM section_texts WHERE id IN "
                        f"({','.join('?' * len(ids))})", ids).fetchall()
    if not rows:
        return {}, True
    vecs = embed([section_text(r[1], r[2], r[3]) for r in rows])
    made = {r[0]: v.tobytes() for r, v in zip(rows, vecs, strict=True)}
    try:
        with transaction(conn):
            conn.executemany("INSERT OR REPLACE INTO section_vectors (section_id, model, vector)"
                             " VALUES (?, ?, ?)", [(i, MODEL, b) for i, b in made.items()])
    except sqlite3.Error as exc:
        log_error(f"semantic search: vectors not kept ({exc})")
        return made, False
    return made, True


def _matrix(conn):
    """(section ids, document ids, vectors) of every section, its missing vectors embedded
    first; cached until the store changes."""
    np = extra()["np"]
    if _STATE.get("version") == _version(conn):
        return _STATE["matrix"]
    ensure_vectors(conn)
    rows = conn.execute("SELECT v.section_id, s.document_id, v.vector FROM section_vectors v"
                        " JOIN sections s ON s.id = v.section_id WHERE v.model = ?", (MODEL,)).fetchall()
    sids = np.array([r[0] for r in rows], dtype=np.int64)
    docs = np.array([r[1] for r in rows], dtype=np.int64)
    vecs = (np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            if rows else np.zeros((0, 1), dtype=np.float32))
    _STATE["version"], _STATE["matrix"] = _version(conn), (sids, docs, vecs)
    return sids, docs, vecs


def cosines(conn, query: str, section_ids) -> dict[int, float]:
    """The cosine between the query and each of these sections, by section id; a section
    with no vector of this model yet is embedded now and its vector kept."""
    np = extra()["np"]
    ids = list(dict.fromkeys(int(i) for i in section_ids))
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    got = {r[0]: r[1] for r in conn.execute(
        f"SELECT section_id, vector FROM section_vectors WHERE model = ? AND section_id IN ({marks})",
        (MODEL, *ids))}
    missing = [i for i in ids if i not in got]
    if missing:
        got.update(_embed_and_keep(conn, missing)[0])
    have = [i for i in ids if i in got]
    if not have:
        return {}
    matrix = np.frombuffer(b"".join(got[i] for i in have), dtype=np.float32).reshape(len(have), -1)
    return dict(zip(have, (float(x) for x in matrix @ embed([query])[0]), strict=True))


def nearest(conn, query: str, limit: int, allowed: set[int] | None = None) -> list[tuple[int, int, float]]:
    """The pages nearest the query over every section's vector (the missing ones embedded
    first), best first, as (document id, best section id, cosine), at most `limit`.
    `allowed`: only these documents (a library's)."""
    np = extra()["np"]
    sids, docs, vecs = _matrix(conn)
    if not len(sids):
        return []
    scores = vecs @ embed([query])[0]
    out: dict[int, tuple[int, int, float]] = {}
    for i in np.argsort(-scores):
        doc = int(docs[i])
        if doc in out or (allowed is not None and doc not in allowed):
            continue
        out[doc] = (doc, int(sids[i]), float(scores[i]))
        if len(out) >= limit:
            break
    return list(out.values())


K = 30       # how flat BM25's rank term is: (K + 1) / (K + rank + 1), 1 for its first page
BETA = 0.5   # the cosine's weight (K and BETA chosen on the benchmark's tuning half)


def rerank(bm25: list[tuple[int, int]], near: list[tuple[int, int, float]], cos: dict[int, float],
           k: float = K, beta: float = BETA) -> list[int]:
    """Document ids by (k + 1) / (k + BM25 rank + 1) + beta * cosine of the page's section.
    `bm25`: (document, section) best first; `near`: the embedding's nearest pages
    (document, section, cosine), which compete with their cosine alone when BM25 missed them."""
    score: dict[int, float] = {}
    for rank, (doc, sid) in enumerate(bm25):
        score.setdefault(doc, (k + 1) / (k + rank + 1) + beta * cos.get(sid, 0.0))
    for doc, _sid, c in near:
        score.setdefault(doc, beta * c)
    return sorted(score, key=lambda d: -score[d])
