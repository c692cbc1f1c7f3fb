"""memhooks._jsonlite against the standard library's json: the same value, or an error from
both, for real payloads, hand-picked edge cases, random values written by json.dumps in every
style, and random mutations of them (truncated, characters flipped, inserted, dropped)."""

import json
import pathlib
import random

import pytest

from memhooks import _jsonlite

FIXTURES = pathlib.Path(__file__).parent / "fixtures"

EDGES = [
    "", " ", "null", "true", "false", "NaN", "Infinity", "-Infinity", "-", "-I", "nul", "tru",
    "0", "-0", "-0.0", "01", "1.", ".5", "1.5e", "1e5", "1E+5", "1e-5", "-1.25E-7", "1e400",
    "123456789012345678901234567890", "1" * 5000, "0x10", "+1", "1_000", "١", "1 2",
    '""', '"a"', '"\\u00e9"', '"\\u00E9"', '"\\ud83d\\ude00"', '"\\ud83d"', '"\\ude00"',
    '"\\ud83d\\u0041"', '"\\ud83d\\uZZZZ"', '"\\ud83dx"', '"\\u12"', '"\\u12G4"', '"\\x41"',
    '"\\"', '"\\\\"', '"\\/"', '"\\b\\f\\n\\r\\t"', '"a\nb"', '"a\tb"', '"\x7f"', '"\x00"',
    '"\u2028"', '"\ud800"', '"unterminated', '"a\\', "[]", "[1,]", "[,1]", "[1 2]", "[[[]]]",
    "{}", '{"a":1,}', '{"a" 1}', "{'a':1}", '{"a":1,"a":2}', "{1:2}", '{"a":[1,{"b":null}]}',
    " \t\n\r[ 1 , 2 ]\r\n", "[1]x", "\ufeff[]", "[\u00a0]", "[NaN,Infinity,-Infinity]",
    '{"":""}', "[" * 50 + "]" * 50, '["\\u0000"]', "[1e]", "[-]", "[--1]", "[1.e1]", "truex",
]


def _same(text) -> None:
    want: tuple[str, str | None]
    got: tuple[str, str | None]
    try:
        want = ("ok", json.dumps(json.loads(text)))
    except (ValueError, RecursionError):
        want = ("error", None)
    try:
        got = ("ok", json.dumps(_jsonlite.loads(text)))
    except (ValueError, RecursionError):
        got = ("error", None)
    assert got == want, repr(text)[:300]


def _random_string(rng: random.Random) -> str:
    pools = ("abc xyz", "\"\\/\b\f\n\r\t", "".join(map(chr, range(0x20))), "éü€中文😀",
             "\ud800\udfff\udc00", "\u2028\u2029\ufeff\x7f\x85")
    return "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randrange(0, 12)))


def _random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 5 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randrange(-10**20, 10**20) if rng.random() < 0.3 else rng.randrange(-9, 99)
    if kind == 2:
        return rng.choice([0.0, -0.0, 1.5, -2.25e-7, 1e300, 3.141592653589793,
                           rng.uniform(-1e6, 1e6), float("nan"), float("inf")])
    if kind in (3, 4, 5):
        return _random_string(rng)
    if kind in (6, 7):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    return {_random_string(rng): _random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}


def _styles(value, rng: random.Random) -> list[str]:
    return [json.dumps(value), json.dumps(value, ensure_ascii=False),
            json.dumps(value, indent=rng.choice((0, 2, "\t"))),
            json.dumps(value, separators=(",", ":"), ensure_ascii=False)]


def _mutations(text: str, rng: random.Random) -> list[str]:
    out = [text[:rng.randrange(len(text) + 1)]]
    for _ in range(4):
        i = rng.randrange(len(text) + 1)
        ch = rng.choice('"\\{}[],:.-+eE0123456789 \nuntfaN\x00\ud800é')
        out += [text[:i] + ch + text[i:], text[:i] + ch + text[i + 1:], text[:i] + text[i + 1:]]
    return out


def test_edge_cases_read_as_json_reads_them():
    for text in EDGES:
        _same(text)
        _same(text.encode("utf-8", "surrogatepass"))


def test_random_values_in_every_style_and_their_mutations():
    rng = random.Random(20261207)
    texts = 0
    for _ in range(1500):
        for text in _styles(_random_value(rng), rng):
            assert json.dumps(_jsonlite.loads(text)) == json.dumps(json.loads(text))
            for mutated in _mutations(text, rng):
                _same(mutated)
                texts += 1
    assert texts > 50_000


def test_bytes_in_every_encoding_json_detects():
    value = {"tool_name": "mcp__context7__query-docs", "text": "é 😀 \u2028", "n": [1, 2.5]}
    for encoding in ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32",
                     "utf-32-le", "utf-32-be"):
        data = json.dumps(value, ensure_ascii=False).encode(encoding)
        assert _jsonlite.loads(data) == json.loads(data) == value
        assert _jsonlite.loads(bytearray(data)) == value
    for raw in (b"\xff", b'"\xc3"', b"\x00", b"\x00\x01", b'"\xed\xa0\x80"'):
        _same(raw)
    with pytest.raises(TypeError):
        _jsonlite.loads(None)


def test_real_payloads_read_the_same():
    files = [p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()]
    assert len(files) > 10
    lines = 0
    for path in files:
        data = path.read_bytes()
        for chunk in ([data] if path.suffix == ".json" else data.splitlines()):
            _same(chunk)
            lines += 1
    assert lines > 10


def test_deep_nesting_is_refused_not_crashed():
    assert json.dumps(_jsonlite.loads("[" * 300 + "]" * 300)) == "[" * 300 + "]" * 300
    with pytest.raises(RecursionError):
        _jsonlite.loads("[" * 100_000 + "]" * 100_000)


def test_a_long_string_with_many_escapes_is_read_in_linear_time():
    text = json.dumps({"text": 'line "quoted" \\ back\n' * 20_000})  # 480 KB, 100,000 escapes
    assert _jsonlite.loads(text) == json.loads(text)


def test_dumps_str_writes_what_json_dumps_writes():
    rng = random.Random(7)
    samples = ["", "plain", 'q"uote', "back\\slash", "\x00\x1f\x7f", "\u2028 é 😀", "\ud800",
               "".join(map(chr, range(0x30)))] + [_random_string(rng) for _ in range(3000)]
    for text in samples:
        assert _jsonlite.dumps_str(text) == json.dumps(text, ensure_ascii=False)
        assert json.loads(_jsonlite.dumps_str(text)) == text


def test_dumps_writes_what_json_dumps_writes():
    rng = random.Random(7)
    values = [_random_value(rng) for _ in range(3000)]
    values += [{"libraryId": "/facebook/react/v18.3.1", "query": "effect \"cleanup\"\n", "tokens": 5000},
               [], {}, -0.0, 10**30, 1e-7, [None, True, False]]
    for value in values:
        assert _jsonlite.dumps(value) == json.dumps(value, ensure_ascii=False), repr(value)[:300]
