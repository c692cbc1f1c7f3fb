"""Is a Bash command a Context7 CLI lookup? (standard library only; a leaf module).

Context7's CLI mode (`ctx7 setup --claude`, the npm package `ctx7`) has the agent run
`ctx7 library <name> [query] [--json]` and `ctx7 docs /org/proj "query" [--json]` through
Bash. `parse()` says whether one Bash command is exactly one such call, and what it asks:

* the program: `ctx7` (or a path whose last part is `ctx7`), `npx [-y|--yes|-q] ctx7[@v]`,
  `bunx [-y] ctx7[@v]`, `pnpm dlx ctx7[@v]`, `pnpx ctx7[@v]`; `NAME=value` assignments
  before it are allowed;
* options where commander reads them, before or after the subcommand: `--json`,
  `--base-url URL` / `--base-url=URL`, and `--` (the rest is positional);
* `library` takes a name and an optional query, `docs` a library ID and a query.

Anything else is "any other Bash command" and gets None: a pipeline, a list (`&&`, `||`,
`;`, `&`), a redirection, a subshell or command substitution (`$`, backticks, parentheses),
a newline, another program that merely mentions ctx7 (`echo ctx7 docs …`, `cat ctx7.md`),
another ctx7 subcommand, an unknown option, too many or too few arguments, a comment, a
word bash would expand (an unquoted `*`, `?`, `[`, `{`, `}`, a leading `~`). The words are
split as a POSIX shell splits them (`split`: single quotes, double quotes, backslashes; the
same words as `shlex.split` for every command it takes, tests/test_ctx7_cli.py checks), in
one pass, linear in the command's length (capped at `MAX_COMMAND` characters). Not `shlex`
itself: it imports `re`, which the hooks' paths do not load.

`with_library_id()` rewrites a parsed `docs` command with another library ID (the rest of
the command as it was, each word quoted as `shlex.quote` quotes it).
"""


MAX_COMMAND = 4000
#: the tool a `ctx7 docs` lookup is served and answered as (memhooks.recall.serve, .fallback)
ANSWERED_AS = "mcp__context7__query-docs"
VERBS = ("library", "docs")
_RUNNER_FLAGS = {"npx": ("-y", "--yes", "-q", "--quiet"), "bunx": ("-y", "--yes"),
                 "pnpx": ("-y", "--yes"), "dlx": ()}
# Characters bash acts on that a plain lookup never needs (outside quotes or inside double
# quotes alike, so refused anywhere): expansion and substitution, and a line break (a second
# command).
_REFUSED_CHARS = ("$", "`", "\n", "\r", "\x00")


class Ctx7Command:
    """One `ctx7 library|docs` call as the CLI reads it. (A plain class: `dataclasses`
    imports `re` and `inspect`, which the hooks' paths do not load.)"""

    __slots__ = ("verb", "target", "query", "json", "base_url", "words", "target_at")

    def __init__(self, verb: str, target: str, query: str, json: bool, base_url: str | None,
                 words: tuple[str, ...], target_at: int) -> None:
        self.verb = verb              # "library" | "docs"
        self.target = target          # the library name (library) or library ID (docs)
        self.query = query            # "" when `library` was given no query
        self.json = json              # --json: the output is JSON
        self.base_url = base_url      # --base-url, None for context7.com
        self.words = words            # every word of the command, as the shell splits it
        self.target_at = target_at    # the index of the target in `words`

    def __repr__(self) -> str:
        return f"Ctx7Command({self.verb!r}, {self.target!r}, {self.query!r}, json={self.json})"


_OPERATORS = frozenset(";&|<>()")
_EXPANDED = frozenset("*?[]{}")  # unquoted: a glob or a brace expansion
_BLANKS = frozenset(" \t")
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def split(command: str) -> list[str] | None:
    """The words of a simple command as a POSIX shell splits them, or None when it is no
    simple command of plain words (an operator, a comment, an expansion, an unclosed quote,
    a trailing backslash). One pass; `$`, backticks and line breaks are refused by `parse`."""
    words: list[str] = []
    word: list[str] = []
    started = False  # a word is open (also an empty quoted one: '')
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in _BLANKS:
            if started:
                words.append("".join(word))
                word, started = [], False
            i += 1
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            word.append(command[i + 1:end])
            started, i = True, end + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    return None
                d = command[i]
                if d == '"':
                    break
                if d == "\\" and i + 1 < n and command[i + 1] in '"\\':
                    word.append(command[i + 1])
                    i += 2
                    continue
                word.append(d)
                i += 1
            started, i = True, i + 1
        elif c == "\\":
            if i + 1 >= n:
                return None
            word.append(command[i + 1])
            started, i = True, i + 2
        elif c in _OPERATORS or c in _EXPANDED or (not started and c in "#~"):
            return None
        else:
            word.append(c)
            started, i = True, i + 1
    if started:
        words.append("".join(word))
    return words


def quote(word: str) -> str:
    """A word for the shell, as `shlex.quote` writes it."""
    if word and all(c in _SAFE for c in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq and name) and (name[0].isalpha() or name[0] == "_") and all(
        c.isascii() and (c.isalnum() or c == "_") for c in name)


def _is_package(word: str) -> bool:
    """`ctx7` or `ctx7@<version or tag>`."""
    if word == "ctx7":
        return True
    name, at, version = word.partition("@")
    return name == "ctx7" and bool(at) and bool(version) and all(
        c.isascii() and (c.isalnum() or c in ".-_+") for c in version)


def _program_end(words: list[str]) -> int | None:
    """The index of the first word after the program (`ctx7`, or a runner and the package)."""
    i = 0
    while i < len(words) and _is_assignment(words[i]):
        i += 1
    if i >= len(words):
        return None
    head = words[i]
    if head == "ctx7" or (head.endswith("/ctx7") and "/" in head):
        return i + 1
    runner = head
    if head == "pnpm":
        if i + 1 >= len(words) or words[i + 1] != "dlx":
            return None
        runner, i = "dlx", i + 1
    flags = _RUNNER_FLAGS.get(runner)
    if flags is None:
        return None
    i += 1
    while i < len(words) and words[i] in flags:
        i += 1
    if i < len(words) and _is_package(words[i]):
        return i + 1
    return None


def parse(command) -> Ctx7Command | None:
    """The ctx7 lookup a Bash command is, or None for any other command."""
    if not isinstance(command, str) or not command.strip() or len(command) > MAX_COMMAND:
        return None
    if "ctx7" not in command or any(c in command for c in _REFUSED_CHARS):
        return None
    words = split(command)
    if not words:
        return None  # a pipeline, a list, a redirection, a subshell, an expansion
    start = _program_end(words)
    if start is None:
        return None
    verb: str | None = None
    as_json, base_url, positional, ended = False, None, [], False
    i = start
    while i < len(words):
        word = words[i]
        if not ended and word.startswith("-") and word != "-":
            if word == "--":
                ended = True
            elif word == "--json" and verb is not None:
                as_json = True
            elif word == "--base-url":
                if i + 1 >= len(words):
                    return None
                base_url, i = words[i + 1], i + 1
            elif word.startswith("--base-url="):
                base_url = word[len("--base-url="):]
            else:
                return None  # --help, --version, an option the CLI does not have
        elif verb is None:
            if word not in VERBS:
                return None
            verb = word
        else:
            positional.append(i)
        i += 1
    if verb is None or (base_url is not None and not base_url.strip()):
        return None
    wanted = (1, 2) if verb == "library" else (2,)
    if len(positional) not in wanted:
        return None
    target = words[positional[0]].strip()
    query = words[positional[1]].strip() if len(positional) > 1 else ""
    if not target or (verb == "docs" and not query):
        return None
    return Ctx7Command(verb, target, query, as_json, base_url, tuple(words), positional[0])


def with_library_id(cmd: Ctx7Command, library_id: str) -> str:
    """The command string of a parsed `ctx7 docs` call asking for `library_id` instead (every
    other word as it was; each word quoted for the shell)."""
    if cmd.verb != "docs":
        raise ValueError("only a `ctx7 docs` command names a library ID")
    words = list(cmd.words)
    words[cmd.target_at] = library_id
    return " ".join(quote(w) for w in words)


def bash_lookup(payload) -> Ctx7Command | None:
    """The ctx7 lookup a hook payload's Bash call runs, or None (any other payload)."""
    if not isinstance(payload, dict) or payload.get("tool_name") != "Bash":
        return None
    tool_input = payload.get("tool_input")
    return parse(tool_input.get("command")) if isinstance(tool_input, dict) else None


def answered_as(cmd: Ctx7Command) -> tuple[str, dict] | None:
    """The Context7 call a lookup is served and answered as: a `docs` lookup as query-docs
    with the same library ID and query; None for `library` (captured, not served)."""
    if cmd.verb != "docs":
        return None
    return ANSWERED_AS, {"libraryId": cmd.target, "query": cmd.query}
