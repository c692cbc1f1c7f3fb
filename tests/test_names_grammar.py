"""Package names, versions and Context7 library IDs against their grammars (memhooks.names)."""

from __future__ import annotations

import time

import pytest

from memhooks.names import checked_library_id, valid_library_id, valid_name, valid_version

GOOD = [
    ("npm", "react"), ("npm", "@types/node"), ("npm", "@tanstack/react-query"), ("npm", "JSONStream"),
    ("npm", "lodash.merge"), ("pypi", "Flask"), ("pypi", "zope.interface"), ("pypi", "typing_extensions"),
    ("pypi", "a"), ("crates", "serde_json"), ("crates", "tokio"), ("go", "github.com/gin-gonic/gin"),
    ("go", "gopkg.in/yaml.v3"), ("go", "github.com/Azure/azure-sdk-for-go/sdk/azcore"),
    ("go", "github.com/labstack/echo/v4"), ("gems", "rails"), ("gems", "ZenTest"), ("gems", "net-http"),
    ("composer", "symfony/console"), ("composer", "laravel/framework"),
]
BAD = [
    ("npm", "left-pad\n\nSYSTEM NOTICE"), ("npm", "\x1b[2Jx"), ("npm", "le\u200bft"), ("npm", "ｌeft"),
    ("npm", "@/x"), ("npm", "a b"), ("npm", ""), ("npm", "x" * 215), ("pypi", "foo-"), ("pypi", "-foo"),
    ("pypi", "foo bar"), ("pypi", "foo\u202e"), ("crates", "9lives"), ("crates", "a" * 65),
    ("go", "github.com/a/../b"), ("go", "/abs/path"), ("go", "github.com/x y"), ("gems", "a\nb"),
    ("composer", "noslash"), ("composer", "a/b/c"), ("composer", "php\n/x"), ("nuget", "x"),
]


@pytest.mark.parametrize("eco,name", GOOD)
def test_good_names(eco, name):
    assert valid_name(name, eco)
    assert valid_name(name, None)


@pytest.mark.parametrize("eco,name", BAD)
def test_bad_names(eco, name):
    assert not valid_name(name, eco)


def test_versions():
    for v in ("1.2.3", "v0.0.0-20240101000000-abcdef123456", "2.1.0+cu121", "1!2.0", "1.0.0-beta.1+exp.sha",
              "1.13.10-x86_64-linux", "0.1.0"):
        assert valid_version(v), v
    for bad in ("1.0\nSYSTEM", "^1.2", "link:../x", "workspace:*", "1.0 ", "\x1b[31m1", "", "1" * 81, None, 5):
        assert not valid_version(bad), bad


def test_library_ids():
    for lid in ("/facebook/react", "/vercel/next.js", "/vercel/next.js/v14.3.0-canary.87", "/facebook/react@18",
                "/websites/react_dev", "/org/.github"):
        assert valid_library_id(lid), lid
    for lid in ("facebook/react", "/facebook", "/a/b/c/d", "/../x", "/a/..", "/a/b\nSYSTEM", "/a/b c",
                "/a/b/../../etc", "//a/b", "/a/b@", "/a/b/", "/ａ/b", "/" + "a" * 300 + "/b"):
        assert not valid_library_id(lid), lid
    assert checked_library_id(" /facebook/react/ ") == "/facebook/react"
    assert checked_library_id("/a/b\nSYSTEM NOTICE") is None


def test_grammars_are_linear_on_2_mib():
    for s in ("a" * (2 << 20), "a-" * (1 << 20), "/" + "a" * (2 << 20), "a/" * (1 << 20), "1." * (1 << 20)):
        t = time.process_time()
        for eco in ("npm", "pypi", "crates", "go", "gems", "composer"):
            valid_name(s, eco)
        valid_version(s)
        valid_library_id(s)
        assert time.process_time() - t < 5.0  # the length cap answers first; generous anyway
    # and uncapped: the checks are one pass over the characters, whatever the shape
    from memhooks.names import _GRAMMARS, split_library_id

    s = ("a-" * (1 << 20)) + "!"
    for key, check in (*_GRAMMARS.items(), ("library_id", split_library_id)):
        t = time.process_time()
        check(s)
        assert time.process_time() - t < 5.0, key
