"""A document's content hash, the one definition (admission and the lookups' pending-event
answers use it; standard library only)."""

import hashlib


def normalise_for_hash(text: str) -> str:
    """The text a content hash covers: line ends unified, trailing blanks and blank edges cut."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def content_hash(text: str) -> str:
    """A document's key: SHA-256 of its normalised text (the one definition; admission and the
    lookups' pending-event answers use it)."""
    return hashlib.sha256(normalise_for_hash(text).encode("utf-8", "surrogatepass")).hexdigest()
