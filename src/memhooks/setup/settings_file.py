"""Claude Code settings files as memhooks reads and writes them: JSON parsed with the file's
own format (indentation, compact or not, trailing newline) kept for writing it back, nested
objects reached without guessing, and atomic writes (temp file + rename, mode kept) that
notice a file changed by someone else meanwhile. A file that is not valid JSON is never
touched."""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass


class InstallError(Exception):
    """A one-line, user-facing reason to stop (nothing has been written)."""



@dataclass
class JsonFile:
    path: str  # the real file (symlinks resolved)
    raw: bytes | None  # None when missing
    data: dict
    indent: int | str | None = 2
    trailing_newline: bool = True
    compact: bool = False

    @classmethod
    def load(cls, path: str) -> JsonFile:
        real = os.path.realpath(path)
        try:
            with open(real, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return cls(real, None, {})
        except OSError as exc:
            raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InstallError(f"{path} is not valid JSON (not UTF-8); left unchanged") from None
        if not text.strip():
            return cls(real, raw, {}, trailing_newline=text.endswith("\n"))
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InstallError(f"{path} is not valid JSON ({exc}); left unchanged") from None
        if not isinstance(data, dict):
            raise InstallError(f"{path} does not hold a JSON object; left unchanged")
        indent, compact = detect_format(text)
        return cls(real, raw, data, indent=indent, trailing_newline=text.endswith("\n"),
                   compact=compact)

    def render(self, data: dict) -> bytes:
        if self.compact:
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        else:
            text = json.dumps(data, ensure_ascii=False, indent=self.indent)
        if self.trailing_newline:
            text += "\n"
        return text.encode("utf-8")


def detect_format(text: str) -> tuple[int | str | None, bool]:
    """(indent, compact) of an existing file."""
    m = re.search(r"\n([ \t]+)\S", text)
    if m:
        ws = m.group(1)
        return (ws if "\t" in ws else len(ws)), False
    if "\n" not in text.strip():
        # One line: `{"a": 1}` (json.dumps default) or `{"a":1}` (compact).
        return None, not re.search(r'":\s', text)
    return 2, False


def container(data: dict, path: list[str], *, create: bool, where: str):
    """Walk/create nested dicts; raise InstallError when a step is not an object."""
    node = data
    for i, key in enumerate(path):
        nxt = node.get(key)
        if nxt is None:
            if not create:
                return None
            nxt = node[key] = {}
        if not isinstance(nxt, dict):
            dotted = ".".join(path[: i + 1])
            raise InstallError(f"{where}: `{dotted}` is not a JSON object; left unchanged")
        node = nxt
    return node


def atomic_write(path: str, data: bytes, expected: bytes | None) -> None:
    folder = os.path.dirname(path)
    created_dirs = not os.path.isdir(folder)
    if created_dirs:
        os.makedirs(folder, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    if mode is None:
        if os.path.basename(path) == ".claude.json":
            mode = 0o600
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".memhooks.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        # Someone (Claude Code itself rewrites ~/.claude.json) changed it meanwhile: retry.
        try:
            with open(path, "rb") as fh:
                now = fh.read()
        except FileNotFoundError:
            now = None
        if now != expected:
            raise Raced()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Raced(Exception):
    pass

