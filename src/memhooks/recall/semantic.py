"""The optional hybrid ranking: `pip install memhooks[semantic]`, turned on with
MEMHOOKS_SEMANTIC=1 (off by default).

The model is WordLlama's `l2_supercat` at 256 dimensions (the `wordllama` package, MIT; its
weights, 16 MB, and tokenizer ship inside the wheel): a static embedding, the mean of token
vectors, fast on a CPU and loaded from the installed package only, never downloaded.
Each section's vector (normalised, float32) is kept in `section_vectors`; the sections that
have none yet are embedded when a search needs them. A query's vector ranks sections by
cosine similarity (numpy), and memhooks.recall.search fuses that ranking with BM25's by
reciprocal rank.

Without the extra (or with it turned off) `available()` is False and search is BM25 alone;
asked for but missing, it says so once in memhooks.log.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memhooks.log import log_error
from memhooks.store.connect import transaction

MODEL = "wordllama-l2_supercat-256"
WEIGHTS = ("weights", "l2_supercat_256.safetensors")
TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
EMBED_BATCH = 256
MAX_EMBED_CHARS = 4000
RRF_K = 60

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


def ensure_vectors(conn) -> int:
    """Embed and keep the sections that have no vector of this model yet; how many."""
    rows = conn.execute(
        "SELECT t.id, t.title, t.headings, t.body FROM section_texts t LEFT JOIN section_vectors v"
        " ON v.section_id = t.id AND v.model = ? WHERE v.section_id IS NULL", (MODEL,)).fetchall()
    done = 0
    for start in range(0, len(rows), EMBED_BATCH):
        batch = rows[start:start + EMBED_BATCH]
        vecs = embed([" ".join(str(x or "") for x in r[1:]) for r in batch])
        try:
            with transaction(conn):
                conn.executemany("INSERT OR REPLACE INTO section_vectors (section_id, model, vector)"
                                 " VALUES (?, ?, ?)", [(r[0], MODEL, v.tobytes()) for r, v in zip(batch, vecs, strict=True)])
        except sqlite3.Error as exc:
            log_error(f"semantic search: vectors not kept ({exc})")
            return done
        done += len(batch)
    return done


def _matrix(conn):
    """(section ids, document ids, vectors) of every kept section vector, cached while the
    store's vector count and newest id are unchanged."""
    np = extra()["np"]
    key = conn.execute("SELECT count(*), max(section_id) FROM section_vectors WHERE model = ?",
                       (MODEL,)).fetchone()
    if _STATE.get("key") == (id(conn), *key):
        return _STATE["matrix"]
    rows = conn.execute("SELECT v.section_id, s.document_id, v.vector FROM section_vectors v"
                        " JOIN sections s ON s.id = v.section_id WHERE v.model = ?", (MODEL,)).fetchall()
    sids = np.array([r[0] for r in rows], dtype=np.int64)
    docs = np.array([r[1] for r in rows], dtype=np.int64)
    vecs = (np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            if rows else np.zeros((0, 1), dtype=np.float32))
    _STATE["key"], _STATE["matrix"] = (id(conn), *key), (sids, docs, vecs)
    return sids, docs, vecs


def ranked_pages(conn, query: str, limit: int, allowed: set[int] | None = None) -> list[tuple[int, int, float]]:
    """(document id, best section id, cosine) of the pages nearest the query, best first.
    `allowed`: only these documents (a library's)."""
    np = extra()["np"]
    ensure_vectors(conn)
    sids, docs, vecs = _matrix(conn)
    if not len(sids):
        return []
    scores = vecs @ embed([query])[0]
    order = np.argsort(-scores)
    out: dict[int, tuple[int, int, float]] = {}
    for i in order:
        doc = int(docs[i])
        if doc in out or (allowed is not None and doc not in allowed):
            continue
        out[doc] = (doc, int(sids[i]), float(scores[i]))
        if len(out) >= limit:
            break
    return list(out.values())


BM25_WEIGHT = 3.0  # BM25's ranking counts 3x the embedding's in the fusion (chosen on the benchmark)


def fuse(*rankings: list[int], k: int = RRF_K, weights: tuple[float, ...] | None = None) -> list[int]:
    """Reciprocal rank fusion of ranked id lists: sum of weight / (k + rank)."""
    score: dict[int, float] = {}
    for n, ranking in enumerate(rankings):
        w = weights[n] if weights else 1.0
        for rank, item in enumerate(ranking):
            score[item] = score.get(item, 0.0) + w / (k + rank + 1)
    return sorted(score, key=lambda item: -score[item])
