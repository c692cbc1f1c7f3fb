"""Small JSON helpers over the standard library's `json` (the hot paths load it)."""

import json

loads = json.loads


def dumps_str(text: str) -> str:
    """A JSON string literal, non-ASCII kept (json.dumps(text, ensure_ascii=False))."""
    return json.dumps(text, ensure_ascii=False)


def loads_object(raw) -> dict:
    """A JSON object (stored metadata) as a dict; {} for anything else (None, '', bad JSON,
    a list). A dict is returned as it is."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def loads_strings(raw) -> list[str]:
    """The strings of a JSON list (stored versions); [] for anything else."""
    try:
        value = json.loads(raw) if raw else []
    except (TypeError, ValueError, RecursionError):
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
