"""Plugin mode: find (or make) a Python for the hooks and the MCP server.

Run by the shims as ``python3 -I -S …/memhooks/bootstrap.py CMD STATE_DIR [ROOT]``, standard
library only and written so that even an old python3 can run it far enough to say it is too old.

* ``ensure`` (SessionStart): validate the cached answer in ``STATE_DIR/python.marker``; if
  it is missing or stale, probe ``python3``/``python3.1x`` on PATH (version ≥ 3.11, and whether
  the dependencies are importable), else fall back to the plugin's own venv in
  ``STATE_DIR/venv``, which is built in the background (detached, under a lock) when missing.
  Prints nothing, or one ``{"systemMessage": …}`` object to show the user once; exit status 3
  when no usable Python exists.
* ``full`` (the MCP shim): like ``ensure``, then wait up to ``MEMHOOKS_VENV_WAIT_S`` (25 s)
  for a running venv build; print the path of a python that has the dependencies, or nothing.
* ``build``: the detached venv builder (``python3 -m venv`` + ``pip install ROOT``), logs to memhooks.log.

The marker holds ``hot=`` (the python for the stdlib-only hot paths), ``full=`` (one with the
dependencies, for the ingester, warming and the MCP server; may be empty while the venv is
being built) and ``stamp=`` (a hash of the plugin's pyproject.toml, so an updated plugin is
re-checked). The bash side reads it with builtins only.
"""

import fcntl
import os
import sys
import time


def dependency_modules():
    """The dependencies' import names, read from deps.py beside this file (their one list)
    when a python is probed: run as a script, the memhooks package is not importable."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deps.py")
    scope = {}  # type: dict
    with open(path, "r") as fh:
        exec(compile(fh.read(), path, "exec"), scope)
    return tuple(scope["MODULES"])


MIN = (3, 11)
MARKER = "python.marker"
VENV = "venv"
READY = ".memhooks-ready"
FAILED = "venv.failed"
LOCK = "venv.lock"
NOTICE_NO_PYTHON = "notice-no-python"
NOTICE_VENV_FAILED = "notice-venv-failed"
CANDIDATES = ("python3", "python3.14", "python3.13", "python3.12", "python3.11")

PROBE_TEMPLATE = (
    "import sys\n"
    "v = sys.version_info\n"
    "if v < (%d, %d):\n"
    "    print('old %%d.%%d %%s' %% (v[0], v[1], sys.executable)); sys.exit(0)\n"
    "import importlib.util\n"
    "missing = [m for m in %r if importlib.util.find_spec(m) is None]\n"
    "print(('missing ' + ','.join(missing) if missing else 'ok') + ' ' + sys.executable)\n"
)


def probe_code():
    return PROBE_TEMPLATE % (MIN[0], MIN[1], dependency_modules())


def plugin_root():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(os.path.dirname(here))


def _abs_setting(name):  # a path setting read as memhooks.config does: None when unset or relative
    path = os.path.expanduser(os.environ.get(name, "").strip())
    return os.path.normpath(path) if os.path.isabs(path) else None


def default_state_dir():
    """Same answer as lib/python.sh: CLAUDE_PLUGIN_DATA, the folder of MEMHOOKS_DB, the data dir."""
    if _abs_setting("CLAUDE_PLUGIN_DATA") or _abs_setting("MEMHOOKS_DB"):
        return _abs_setting("CLAUDE_PLUGIN_DATA") or os.path.dirname(_abs_setting("MEMHOOKS_DB"))
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), "Library", "Application Support", "memhooks")
    return os.path.join(_abs_setting("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "memhooks")


def _is_exe(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _read(path):
    try:
        with open(path, "r") as fh:
            return fh.read()
    except (OSError, ValueError):
        return None


def _write(path, text):
    """Atomic small-file write (0600)."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def stamp(root):
    try:
        with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
            import hashlib  # lazy: only when the marker's size and mtime of pyproject.toml changed

            return hashlib.sha256(fh.read()).hexdigest()[:16]
    except OSError:
        return "none"


def pyproject_key(root):
    """Size and mtime of the plugin's pyproject.toml: the marker keeps them beside the stamp,
    so an unchanged file is not read and hashed again (loading the sha256 module and
    hashing cost SessionStart ~0.4 ms)."""
    try:
        st = os.stat(os.path.join(root, "pyproject.toml"))
    except OSError:
        return ""
    return "%d:%d" % (st.st_size, st.st_mtime_ns)


def read_marker(state):
    out = {"hot": "", "full": "", "stamp": "", "pyproject": ""}
    text = _read(os.path.join(state, MARKER))
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key in out:
            out[key] = value
    return out


def write_marker(state, hot, full, stamp_, key=""):
    text = "hot=%s\nfull=%s\nstamp=%s\n" % (hot or "", full or "", stamp_ or "")
    if stamp_ and key:
        text += "pyproject=%s\n" % key
    if _read(os.path.join(state, MARKER)) != text:
        _write(os.path.join(state, MARKER), text)


def probe(python, timeout=15):
    """(version_ok, deps_ok, real_executable, detail) for one interpreter. Never raises."""
    import subprocess  # lazy: runs on any python3, at every SessionStart: what this step uses

    try:
        proc = subprocess.run([python, "-c", probe_code()], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=timeout, cwd="/")
        words = proc.stdout.decode("utf-8", "replace").strip().split(" ", 2)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:  # missing, NUL in path, timeout
        return False, False, python, "cannot run: %s" % exc
    if not words or not words[0]:
        return False, False, python, "cannot run"
    if words[0] == "old":
        return False, False, words[-1] if len(words) > 2 else python, "Python %s" % words[1]
    real = words[-1] if len(words) >= 2 else python
    if words[0] == "ok":
        return True, True, real, "ok"
    return True, False, real, "missing " + (words[1] if len(words) > 2 else "")


def candidates():
    import shutil  # lazy: runs on any python3, at every SessionStart: what this step uses

    seen, out = set(), []
    for name in CANDIDATES:
        path = shutil.which(name)
        if path and path not in seen:
            seen.add(path)
            out.append(path)
    return out


def venv_python(state):
    return os.path.join(state, VENV, "bin", "python")


def _log(message):
    try:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from memhooks.log import log_error  # lazy: may fail on an old python3 (path set above)

        log_error("bootstrap: " + message)
    except Exception:  # noqa: BLE001 - the log is best effort: it never stops the bootstrap
        pass


def _log_path():
    try:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from memhooks.config import log_path  # lazy: may fail on an old python3 (path set above)

        return log_path()
    except Exception:  # noqa: BLE001 - any config trouble: no log path, the caller says so
        return None


def build_running(state):

    try:
        fd = os.open(os.path.join(state, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock we may have taken
    return False


def start_build(python, state, root):
    """Start the detached venv builder; it takes the lock itself, so starting two is harmless."""
    import subprocess  # lazy: runs on any python3, at every SessionStart: what this step uses

    try:
        subprocess.Popen([python, "-I", "-S", os.path.abspath(__file__), "build", state, root],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, cwd=state)
        return True
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        _log("cannot start the venv build: %s" % exc)
        return False


def _notice_once(state, name, text):
    path = os.path.join(state, name)
    if os.path.exists(path):
        return None
    try:
        _write(path, text + "\n")
    except OSError:
        pass
    return text


def _clear_notices(state):
    for name in (NOTICE_NO_PYTHON, NOTICE_VENV_FAILED, NOTICE_BUILDING):
        try:
            os.unlink(os.path.join(state, name))
        except OSError:
            pass


def resolve(state, root):
    """Decide (hot, full, status) and refresh the marker; start the venv build if needed.

    status: "ok" | "building" | "venv-failed" | "no-python" (detail in the 4th item)."""
    try:
        os.makedirs(state, 0o700, exist_ok=True)
    except OSError:
        pass
    marker = read_marker(state)
    key = pyproject_key(root)
    if key and marker["pyproject"] == key and marker["stamp"] and _is_exe(marker["full"]):
        return marker["hot"] if _is_exe(marker["hot"]) else marker["full"], marker["full"], "ok", ""
    st = stamp(root)
    if marker["stamp"] == st and _is_exe(marker["full"]):
        write_marker(state, marker["hot"], marker["full"], st, key)  # and the file's key, for next time
        return marker["hot"] if _is_exe(marker["hot"]) else marker["full"], marker["full"], "ok", ""
    hot = full = None
    seen_old = []
    for cand in candidates():
        v_ok, d_ok, real, detail = probe(cand)
        if not v_ok:
            seen_old.append("%s (%s)" % (cand, detail))
            continue
        if hot is None:
            hot = real
        if d_ok:
            full = real
            break
    vpy = venv_python(state)
    if full is None and _is_exe(vpy):
        v_ok, d_ok, _real, _d = probe(vpy)
        if d_ok:
            full = vpy
            if (_read(os.path.join(state, VENV, READY)) or "").strip() != st and hot:
                start_build(hot, state, root)  # the plugin changed: refresh the venv
        elif v_ok and hot is None:
            hot = vpy
    status, detail = "ok", ""
    if full is None:
        if hot is None:
            status, detail = "no-python", "; ".join(seen_old)
        elif (_read(os.path.join(state, FAILED)) or "").strip() == st and not build_running(state):
            status = "venv-failed"
        else:
            status = "building"
            if not build_running(state):
                start_build(hot, state, root)
    else:
        hot = full  # one interpreter for everything once the dependencies are there
    write_marker(state, hot, full, st if full else "", key)
    return hot, full, status, detail


NOTICE_BUILDING = "notice-building"


def ensure(state, root):
    """Decide the interpreters and the one-time notice for this session.

    Returns (full, status, message): the python with the dependencies (or None), the status
    of resolve(), and the text of a systemMessage to show (once per cause), or None."""
    hot, full, status, detail = resolve(state, root)
    if status == "ok":
        _clear_notices(state)
        return full, status, None
    if status == "no-python":
        found = (" Found: %s." % detail) if detail else ""
        return None, status, _notice_once(state, NOTICE_NO_PYTHON, (
            "memhooks: no Python %d.%d+ was found, so documentation capture and warming are off.%s "
            "Install Python %d.%d or newer (then start a new session), or `pip install /path/to/memhooks` "
            "with a newer python and set MEMHOOKS_PYTHON to it." % (MIN + (found,) + MIN)))
    if status == "venv-failed":
        msg = _notice_once(state, NOTICE_VENV_FAILED, (
            "memhooks: installing its Python dependencies into %s failed (see memhooks.log), so "
            "the memhooks MCP server and background indexing are off; capture still works. "
            "Run `pip install /path/to/memhooks` (a checkout, git URL or wheel) and set MEMHOOKS_PYTHON "
            "to that python, or fix the error and start a new session." % os.path.join(state, VENV)))
        try:
            os.unlink(os.path.join(state, FAILED))  # try again next session
        except OSError:
            pass
        return None, status, msg
    # "building": the first session after an install, while the venv is made in the background
    # (a retry after a failure the user was told about says nothing new).
    if os.path.exists(os.path.join(state, NOTICE_VENV_FAILED)):
        return None, status, None
    return None, status, _notice_once(state, NOTICE_BUILDING, (
        "memhooks is setting up its Python environment in the background (about a minute; "
        "progress in %s). Capture already works: the docs looked up in this session are kept. "
        "Its MCP tools (search_documents, get_document, lookup_library) and cache warming "
        "arrive in your next session." % os.path.join(state, "memhooks.log")))


def cmd_ensure(state, root):
    import json  # lazy: runs on any python3, at every SessionStart: what this step uses

    _full, status, msg = ensure(state, root)
    if msg:  # always a whole object: Claude Code shows a bare JSON string to nobody
        sys.stdout.write(json.dumps({"systemMessage": msg}) + "\n")
    return 3 if status == "no-python" else 0


def cmd_full(state, root):

    hot, full, status, _ = resolve(state, root)
    if full is None and status == "building":
        try:
            wait = float(os.environ.get("MEMHOOKS_VENV_WAIT_S", "25"))
        except ValueError:
            wait = 25.0
        deadline = time.monotonic() + wait
        time.sleep(0.5)  # let a just-started builder take its lock
        while time.monotonic() < deadline:
            marker = read_marker(state)
            if _is_exe(marker["full"]):
                full = marker["full"]
                break
            if not build_running(state):
                break
            time.sleep(0.25)
    if full:
        sys.stdout.write(full + "\n")
    return 0


def cmd_build(state, root):
    import shutil
    import subprocess

    os.makedirs(state, 0o700, exist_ok=True)
    fd = os.open(os.path.join(state, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return 0  # another session is building it
    st = stamp(root)
    venv = os.path.join(state, VENV)
    vpy = venv_python(state)
    try:
        if (_read(os.path.join(venv, READY)) or "").strip() == st and probe(vpy)[1]:
            return 0
        log = _log_path()
        out = open(log, "ab") if log else subprocess.DEVNULL
        try:
            _log("building %s with %s (pip install %s)" % (venv, sys.executable, root))
            if not _is_exe(vpy):
                shutil.rmtree(venv, ignore_errors=True)
                subprocess.run([sys.executable, "-m", "venv", venv], stdin=subprocess.DEVNULL,
                               stdout=out, stderr=out, check=True, timeout=300)
            subprocess.run([vpy, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                            "--quiet", root], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                           check=True, timeout=1200, cwd=state)
        finally:
            if not isinstance(out, int):  # subprocess.DEVNULL is an int
                out.close()
        v_ok, d_ok, _real, detail = probe(vpy)
        if not d_ok:
            raise RuntimeError("the new venv cannot import the dependencies: %s" % detail)
        _write(os.path.join(venv, READY), st + "\n")
        try:
            os.unlink(os.path.join(state, FAILED))
        except OSError:
            pass
        write_marker(state, vpy, vpy, st, pyproject_key(root))
        _log("venv ready: %s" % vpy)
    except BaseException as exc:  # noqa: BLE001 - a detached builder: log, mark failed, exit 0
        _log("venv build failed: %s: %s" % (type(exc).__name__, exc))
        try:
            _write(os.path.join(state, FAILED), st + "\n")
        except OSError:
            pass
    finally:
        os.close(fd)
    return 0


def main(argv):
    cmd = argv[0] if argv else ""
    state = argv[1] if len(argv) > 1 and argv[1] else default_state_dir()
    root = argv[2] if len(argv) > 2 and argv[2] else plugin_root()
    root = os.path.abspath(root)
    if cmd == "ensure":
        return cmd_ensure(state, root)
    if cmd == "full":
        return cmd_full(state, root)
    if cmd == "build":
        return cmd_build(state, root)
    return 0


if __name__ == "__main__":
    # Running this file puts its folder (memhooks/) first on sys.path: drop it.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    try:
        code = main(sys.argv[1:])
    except BaseException:  # noqa: BLE001 - never a traceback in a hook
        code = 0
    sys.exit(code)
