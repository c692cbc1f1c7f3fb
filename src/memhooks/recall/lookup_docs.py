"""What `lc-cache-lookup-docs ID TOPIC` and `memhooks cache lookup-docs` answer: the documents
serving would answer the same question with (standard library only).

The exact key first: the document captured (or written) for exactly that library and topic,
fresh under the tier2 TTL. Else the serving rules of PreToolUse (memhooks.recall.serve
`answer_docs`: the library's fresh documents, BM25-ranked, cut into snippets, and only when a
few snippets together hold every content word of TOPIC, by memhooks.recall.coverage), so a
lookup answers every paraphrase a served call would, and nothing it would not. The exact
key is tried first because it needs no snippet cutting (no `re` on the common lookup).
"""

import time

from memhooks.recall.budget import within
from memhooks.recall.serve import answer_docs
from memhooks.store.queries import content_hashes, find_tier2, main_file
from memhooks.store.reads import note

MAX_CHARS = 12000  # as a served answer (MEMHOOKS_SERVE_MAX_CHARS' default)

def covered_docs(conn, library_id: str, topic: str, project: str,
                 now: float | None = None) -> tuple[int, str, str] | None:
    """(first document id, the covering snippets, its content hash) under the serving rules,
    or None (also when the decision ran past its budget)."""
    now = time.time() if now is None else now
    args = {"libraryId": library_id, "query": topic}
    served = within(conn, None, answer_docs, conn, "query-docs", args, project, now, MAX_CHARS)
    if served is None or not served.doc_ids:
        return None
    hashes = content_hashes(conn, served.doc_ids[:1])
    return served.doc_ids[0], served.body, hashes[0] if hashes else ""


def find_docs(conn, library_id: str, topic: str, project: str,
              now: float | None = None) -> tuple[int, str, str] | None:
    """The exact key's fresh document, else the covered documents (see the module doc)."""
    return find_tier2(conn, library_id, topic, now) or covered_docs(conn, library_id, topic,
                                                                    project, now)


def lookup_covered_docs(conn, library_id: str, topic: str, project: str, *,
                        origin: str = "agent") -> tuple[int, str, str] | None:
    """`find_docs`, counted as a tier2 hit or miss (the reads log, memhooks.store.reads)."""
    hit = find_docs(conn, library_id, topic, project)
    note(main_file(conn), "tier2", "hit" if hit else "miss", project, hit[2] if hit else "",
         origin=origin)
    return hit
