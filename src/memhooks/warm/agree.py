"""Whether a Context7 library is the one a package name asked for (standard library only).

A Context7 search answers with whatever it ranks first, related or not (`fastapi` can come
back as `/facebook/react`). Warming keeps an answer only when it agrees with the name:

* the result's title or its ID's repository (`/owner/REPO`) is the package name, compared
  as compact keys: case and every character that is not a letter or digit ignored
  (`FastAPI` = `fastapi`, `next.js` = `nextjs` = `Next.js`), after memhooks.names.normalize;
  a few spellings of one name are the same name: a `js` suffix (`next` ~ `Next.js`), a
  `python-`/`py` prefix (`python-dateutil` ~ `dateutil`), trailing version digits
  (`beautifulsoup4` ~ `Beautiful Soup`);
* a scoped npm name (`@scope/name`) compares `name` too, and also agrees with `/scope/repo`
  when the repository is the scope (`@angular/core` ~ `/angular/angular`) or shares a
  non-generic word with `name` (`@tanstack/react-query` ~ `/tanstack/query`). The `@types`
  scope never does: type stubs are not the library (`@types/node` is never `/nodejs/node`);
* the package's repository (a Go module path such as `github.com/gin-gonic/gin`, a
  Composer name `vendor/package`, or the repository a manifest names for a git dependency,
  `github:owner/repo` or `git+https://github.com/owner/repo.git`) is the ID's `/owner/repo`.

Anything else is a rejection: left out, counted, never written to tier1 nor told to the agent.
"""

from __future__ import annotations

from memhooks.names import normalize

# Words too common to tie a scoped package to a repository on their own.
GENERIC = frozenset({
    "js", "ts", "core", "client", "server", "sdk", "api", "lib", "libs", "utils", "util", "ui",
    "plugin", "plugins", "react", "vue", "node", "cli", "types", "common", "shared", "web",
    "app", "kit", "tools", "dev", "config", "base", "next", "docs",
})
REPO_HOSTS = ("github.com/", "gitlab.com/", "bitbucket.org/", "codeberg.org/")


def compact(text: str | None) -> str:
    """Lower-case letters and digits only."""
    return "".join(ch for ch in (text or "").lower() if ch.isalnum())


def _words(text: str) -> set[str]:
    out, cur = set(), []
    for ch in (text or "").lower() + " ":
        if ch.isalnum():
            cur.append(ch)
        elif cur:
            out.add("".join(cur))
            cur = []
    return out


def _spellings(key: str) -> set[str]:
    """One name's usual spellings as compact keys (see the module doc)."""
    if not key:
        return set()
    out = {key, key + "js"}
    if key.endswith("js") and len(key) > 4:
        out.add(key[:-2])
    stripped = key.rstrip("0123456789")
    if stripped != key and len(stripped) >= 4:
        out.add(stripped)
    return out


def _id_parts(library_id: str) -> tuple[str, str] | None:
    """`/owner/repo[/version]` or `/owner/repo@version` -> (owner, repo), lower-case."""
    parts = [p for p in (library_id or "").strip().split("/") if p]
    if len(parts) < 2:
        return None
    return parts[0].lower(), parts[1].split("@", 1)[0].lower()


def repo_of_url(url: str | None) -> tuple[str, str] | None:
    """(owner, repo) of a repository URL or path on a known host (`git+https://github.com/a/b.git`,
    `github:a/b`, `github.com/a/b/v2`), else None."""
    u = (url or "").strip().lower()
    if not u:
        return None
    if u.startswith("github:"):
        u = "github.com/" + u[len("github:"):]
    if "://" in u:  # a scheme (https, git+ssh, ...)
        u = u.split("://", 1)[1]
    head = u.split("/", 1)[0]
    if "@" in head:  # a user (git@github.com:a/b, https://user@host/...)
        u = u.split("@", 1)[1]
    for host in REPO_HOSTS:
        if u.startswith(host[:-1] + ":"):  # scp-like ssh: host:owner/repo
            u = host + u[len(host):]
    for host in REPO_HOSTS:
        if u.startswith(host):
            parts = [p for p in u[len(host):].split("#", 1)[0].split("?", 1)[0].split("/") if p]
            if len(parts) >= 2:
                return parts[0], parts[1].removesuffix(".git")
    return None


def agrees(name: str, ecosystem: str | None, library_id: str, title: str | None = None,
           repository: str | None = None) -> bool:
    """Whether the library (`library_id`, `title`) is the package `name` (see the module doc)."""
    ids = _id_parts(library_id)
    if ids is None or not name:
        return False
    owner, repo = ids
    key = normalize(name, ecosystem)
    for where in (repository, key if ecosystem in ("go", None) else None):
        found = repo_of_url(where)
        if found is None and where is repository and where and where.count("/") == 1:
            own, _, name_ = where.lower().partition("/")  # "owner/repo" (memhooks.warm.rank)
            found = (own, name_)
        if found is not None and found == (owner, repo):
            return True
    if ecosystem == "composer" and key.count("/") == 1 and tuple(key.split("/")) == (owner, repo):
        return True
    names = {key}
    for cut in ("python-", "-python"):  # python-dateutil ~ dateutil, opencv-python ~ opencv
        bare = key.removeprefix(cut) if cut.endswith("-") else key.removesuffix(cut)
        if bare != key and len(bare) >= 3:
            names.add(bare)
    scope = rest = None
    if key.startswith("@") and "/" in key:
        scope, rest = key[1:].split("/", 1)
        if scope == "types":
            return False  # a type stub is never the library itself
        names.add(rest)
    elif "/" in key:  # go module paths, composer vendor/package: their last part
        tail = [p for p in key.split("/") if p]
        last = tail[-1] if tail else ""
        if len(tail) > 1 and last[:1] == "v" and last[1:].isdigit():  # .../v2
            last = tail[-2]
        names.add(last.split(".v", 1)[0])  # gopkg.in/yaml.v3
    wanted = set()
    for n in names:
        wanted |= _spellings(compact(n))
    if compact(repo) in wanted or (title and compact(title) in wanted):
        return True
    if scope and owner in (scope, compact(scope)):
        if repo == scope or compact(repo) == compact(scope):
            return True
        shared = (_words(repo) & _words(rest or "")) - GENERIC
        return bool(shared)
    return False
