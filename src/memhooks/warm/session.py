"""SessionStart's slow half: the answer from tier1 when it is complete, else the full warm
(scan, resolve, the Context7 API), in a python with the dependencies."""

import os

from memhooks.store.connect import closing, connect
from memhooks.warm.fastpath import fast_answer, hook_json, status_output
from memhooks.warm.resolve import warm


def session_start_output(db: str, project: str, after_warm=None) -> str:
    """One JSON object for the SessionStart hook, every time. `after_warm(db, project)` is
    the caller's work after a warm that ran (memhooks._launch: a detached team pull)."""
    if not project or not os.path.isdir(project):
        return status_output(db, project)
    with closing(connect(db)) as conn:
        context = fast_answer(conn, project)
        if context is None:
            context = warm(conn, project).context
            if after_warm is not None:
                after_warm(db, project)
    return hook_json(context)
