"""The lockfile fingerprint (standard library only: the SessionStart fast path).

Stat only, no reads: (path, mtime_ns, size) of every manifest read and
(path, mtime_ns) of every folder visited. A folder's mtime changes when an
entry is added or removed, so a new manifest changes the fingerprint too. The
fingerprint is the listing itself (a few KB), compared exactly: no hash import
on the fast path, and no collisions.
"""

import os


def fingerprint(root: str, files: list[str], dirs: list[str]) -> str:
    rootp = os.fspath(root)
    parts = []
    for tag, names in (("f", files), ("d", dirs)):
        for rel in sorted(set(names)):
            try:
                st = os.stat(os.path.join(rootp, rel))
                stamp = f"{st.st_mtime_ns}:{st.st_size}" if tag == "f" else str(st.st_mtime_ns)
            except OSError:
                stamp = "-"
            parts.append(f"{tag}:{rel}:{stamp}")
    return "\n".join(parts)
