"""The stable launcher `memhooks install` writes: what the settings' hook commands and MCP
server run, so that they keep working when memhooks moves.

The hooks used to run ``"<python>" -I -S "<site-packages>/memhooks/_entry.py" …``; `pip
install -e .` (a reinstall, an upgrade, a venv rebuild) removes that file and every hook then
failed (`can't open file`, exit 2: a blocking error for PreToolUse). Now they run a small
script kept in memhooks' own data folder (beside the store, outside any environment):

    "<python>" -I -S "<data>/memhooks-launch-<key>.py" post-tool-use 2>/dev/null || true

The script records the interpreter, the package folder and the folder holding memhooks'
distribution metadata (site-packages) with its mtime. On the hot path it costs one stat:
while that folder is unchanged it puts the package's parent first on ``sys.path`` and runs
``memhooks._launch``. After any install into that environment (the folder's mtime moves) or
when the package is gone, it asks the recorded interpreter once where memhooks is now
(``<python> -E -P -c 'import memhooks …'``, which finds an editable install too), rewrites
its own header and goes on. When the interpreter no longer has memhooks, the hooks exit 0
silently (re-checked at most once a minute) and the MCP server says what to run;
`memhooks doctor` names the fix. When the interpreter itself is gone, ``|| true`` keeps the
hook's exit status 0.

One launcher per interpreter (the key is a hash of its path), shared by every scope that
interpreter installed. Standard library only; the template's hot path imports nothing.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution

from memhooks import config

PREFIX = "memhooks-launch-"
NAME_RE = re.compile(r"memhooks-launch-[0-9a-f]{8,64}\.py")
HEADER_KEYS = ("PYTHON", "PACKAGE", "SITE", "STAMP", "CHECKED")

# What the launcher asks the interpreter (run as `python -E -P -c …`, site enabled so an
# editable install's .pth or finder is honoured): the package folder, then the folder that
# holds its distribution metadata (where installs and uninstalls happen).
PROBE = (
    "import os, memhooks\n"
    "p = os.path.dirname(os.path.abspath(memhooks.__file__))\n"
    "try:\n"
    "    from importlib.metadata import distribution\n"
    "    s = os.path.abspath(str(distribution('memhooks').locate_file('')))\n"
    "except Exception:\n"
    "    s = os.path.dirname(p)\n"
    "print(p)\n"
    "print(s)\n"
)

# The slow path is a string, compiled only when it runs: a script is compiled from source on
# every run, and the hot path should cost what `_entry.py` costs (a few lines).
SLOW = r"""
import time


def _relocate():
    # Ask this interpreter where memhooks is now; record the answer ('' for nowhere).
    import subprocess

    global PACKAGE, SITE, STAMP, CHECKED
    package = site = ""
    try:
        out = subprocess.run([sys.executable, "-E", "-P", "-c", PROBE], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=4, cwd="/").stdout.decode().split("\n")
        if os.path.isabs(out[0]) and os.path.isfile(os.path.join(out[0], "_launch.py")):
            package, site = out[0], out[1] or os.path.dirname(out[0])
    except Exception:
        pass
    PACKAGE, SITE, CHECKED = package, site or SITE, int(time.time())
    try:
        STAMP = os.stat(SITE).st_mtime_ns
    except OSError:
        STAMP = 0
    try:
        with open(__file__, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        values = {"PACKAGE": PACKAGE, "SITE": SITE, "STAMP": STAMP, "CHECKED": CHECKED}
        for i, line in enumerate(lines[:8]):
            name = line.split(" = ", 1)[0]
            if name in values:
                lines[i] = "%s = %r" % (name, values[name])
        tmp = "%s.%d.tmp" % (__file__, os.getpid())
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
        os.replace(tmp, __file__)
    except OSError:
        pass


if PACKAGE and "memhooks._launch" in sys.modules:
    print(PACKAGE)  # --where, and the package is where it was recorded
    sys.exit(0)
if _inserted:
    del sys.path[0]
for name in [m for m in sys.modules if m == "memhooks" or m.startswith("memhooks.")]:
    del sys.modules[name]
if PACKAGE or not 0 <= time.time() - CHECKED < 60:  # not found a moment ago: stay quiet
    _relocate()
    if PACKAGE:
        sys.path.insert(0, os.path.dirname(PACKAGE))
        try:
            from memhooks._launch import run
        except ImportError:
            pass
        else:
            if ARGV[:1] == ["--where"]:
                print(PACKAGE)
                sys.exit(0)
            run(ARGV)
if ARGV[:1] == ["mcp"]:
    sys.stderr.write("memhooks: %s no longer has memhooks installed (it moved or was uninstalled). "
                     "Run `memhooks install` again with the memhooks you use now.\n" % PYTHON)
    sys.exit(1)
sys.exit(3 if ARGV[:1] == ["--where"] else 0)
"""

TEMPLATE = """\
# memhooks launcher, written by `memhooks install` for the interpreter below (it rewrites
# these five lines itself when memhooks moves; `memhooks install` rewrites the file).
PYTHON = @PYTHON@
PACKAGE = @PACKAGE@
SITE = @SITE@
STAMP = @STAMP@
CHECKED = @CHECKED@
import os
import sys

PROBE = @PROBE@
SLOW = @SLOW@

if __name__ == "__main__":
    sys.dont_write_bytecode = False
    ARGV = sys.argv[1:]
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    _inserted = False
    try:
        _fresh = bool(PACKAGE) and os.stat(SITE).st_mtime_ns == STAMP
    except OSError:
        _fresh = False
    if _fresh:
        sys.path.insert(0, os.path.dirname(PACKAGE))
        _inserted = True
        try:
            from memhooks._launch import run
        except ImportError:
            pass
        else:
            if ARGV[:1] != ["--where"]:
                run(ARGV)
    exec(compile(SLOW, __file__, "exec"))
"""


def launcher_dir() -> str:
    """memhooks' own data folder (the store's folder), outside any Python environment."""
    return os.path.dirname(config.db_path())


def launcher_path(python: str, folder: str | None = None) -> str:
    key = hashlib.sha256(os.path.abspath(python).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return os.path.join(folder or launcher_dir(), f"{PREFIX}{key}.py")


def package_dir() -> str:
    """The folder of the memhooks package this process runs."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def site_dir(package: str) -> str:
    """The folder holding memhooks' distribution metadata (where pip installs and removes it);
    the package's parent when there is none (a checkout on sys.path)."""
    try:
        try:
            return os.path.abspath(str(distribution("memhooks").locate_file("")))
        except PackageNotFoundError:
            pass
    except Exception:  # noqa: BLE001 - metadata of a broken environment: fall back
        pass
    return os.path.dirname(package)


def render(python: str, package: str, site: str | None = None) -> bytes:
    site = site or site_dir(package)
    try:
        stamp = os.stat(site).st_mtime_ns
    except OSError:
        stamp = 0
    text = TEMPLATE
    for key, value in (("PYTHON", python), ("PACKAGE", package), ("SITE", site), ("STAMP", stamp),
                       ("CHECKED", 0), ("PROBE", PROBE), ("SLOW", SLOW)):
        text = text.replace(f"@{key}@", repr(value))
    return text.encode("utf-8")


def is_launcher(path) -> bool:
    return isinstance(path, str) and bool(NAME_RE.fullmatch(os.path.basename(path)))


def read_header(path: str) -> dict | None:
    """The values a launcher holds (PYTHON, PACKAGE, SITE, STAMP, CHECKED), or None when it
    cannot be read or is not one."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = [fh.readline() for _ in range(8)]
    except (OSError, UnicodeDecodeError):
        return None
    out: dict = {}
    for line in head:
        name, sep, value = line.rstrip("\n").partition(" = ")
        if sep and name in HEADER_KEYS:
            try:
                out[name] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return None
    return out if set(out) == set(HEADER_KEYS) else None


# ----------------------------------------------------------------------------- doctor

def reinstall_hint(scope: str) -> str:
    """The command that writes working entries again: this memhooks' own `install`."""
    exe = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "memhooks")
    cmd = f'"{exe}"' if os.path.isfile(exe) and " " in exe else (exe if os.path.isfile(exe) else "memhooks")
    return f"run `{cmd} install{'' if scope == 'user' else ' --scope ' + scope}` again"


def problems(paths: list[str]) -> list[str]:
    """What keeps a hook command's [python, script] from running (empty: it runs). A launcher
    is asked where memhooks is (`--where`, which also records a moved package); a command
    that runs a package's `_entry.py` directly is one an older memhooks wrote."""
    if len(paths) < 2:
        return []
    python, script = paths[0], paths[1]
    if not os.path.exists(python):
        return [f"the python the hooks run is gone ({python})"]
    if not os.path.exists(script):
        return [f"missing {script}"]
    if not is_launcher(script):
        return [f"the hooks run {script} directly (written by an older memhooks: the next "
                "reinstall or `pip install -e` breaks them)"]
    try:
        proc = subprocess.run([python, "-I", "-S", script, "--where"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=15, cwd="/")
    except (OSError, subprocess.SubprocessError) as exc:
        return [f"{python} cannot run {script} ({exc})"]
    if proc.returncode != 0 or not proc.stdout.strip():
        return [f"{python} no longer has memhooks (it was uninstalled or its environment rebuilt "
                "without it)"]
    return []
