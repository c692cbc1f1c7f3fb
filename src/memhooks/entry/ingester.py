"""The detached ingester process (`_entry.py ingest [--background] [--lock-fd=N]`): ingest what
the hooks journaled (memhooks.capture.ingester), then the team push when a team store is
configured. A python without the dependencies does nothing: the events wait for one that has
them. Logs once and exits 0 on anything."""

from memhooks.entry._boundary import guard


def _run(args: list[str]) -> int:
    import importlib.util

    if importlib.util.find_spec("pydantic") is None:
        return 0
    from memhooks.capture.ingester import main as ingest
    from memhooks.team.runner import after_ingest  # a no-op unless a team store is configured

    return ingest(args, after_ingest=after_ingest)


def main(args: list[str]) -> int:
    return guard("ingest", _run, list(args))
