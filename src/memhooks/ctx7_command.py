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
another ctx7 subcommand, an unknown option, too many or too few arguments. The words are
split by `shlex` in POSIX mode (linear in the command's length; the command is capped at
`MAX_COMMAND` characters) with punctuation characters split out, so an operator is a token
of its own whatever the spacing.

`with_library_id()` rewrites a parsed `docs` command with another library ID (the rest of
the command as it was, each word quoted by `shlex.join`).
"""

import shlex
from dataclasses import dataclass

MAX_COMMAND = 4000
VERBS = ("library", "docs")
_RUNNER_FLAGS = {"npx": ("-y", "--yes", "-q", "--quiet"), "bunx": ("-y", "--yes"),
                 "pnpx": ("-y", "--yes"), "dlx": ()}
# Characters bash acts on that a plain lookup never needs (outside quotes or inside double
# quotes alike, so refused anywhere): expansion and substitution, and a line break (a second
# command).
_REFUSED_CHARS = ("$", "`", "\n", "\r", "\x00")
_OPERATOR_CHARS = frozenset("();<>|&")


@dataclass(frozen=True)
class Ctx7Command:
    """One `ctx7 library|docs` call as the CLI reads it."""

    verb: str                  # "library" | "docs"
    target: str                # the library name (library) or library ID (docs)
    query: str                 # "" when `library` was given no query
    json: bool                 # --json: the output is JSON
    base_url: str | None       # --base-url, None for context7.com
    words: tuple[str, ...]     # every word of the command, as shlex split it
    target_at: int             # the index of the target in `words`


def _split(command: str) -> list[str] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # a `#` is part of a word here (a query may hold one)
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote or a trailing backslash
        return None


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
    words = _split(command)
    if not words:
        return None
    if any(w and all(c in _OPERATOR_CHARS for c in w) for w in words):
        return None  # a pipeline, a list, a redirection, a subshell
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
    return shlex.join(words)
