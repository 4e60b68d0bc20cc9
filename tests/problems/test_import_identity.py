"""Recognising a problem across datasets, limits written as text, languages without labels."""

from __future__ import annotations

import pytest

from problems.importers.identity import (
    is_original,
    memory_limit_mb,
    platform_id_from_url,
    platform_normalise,
    time_limit_ms,
)
from problems.importers.languages import detect_language, language_from_label, reliability_rank


@pytest.mark.parametrize(("url", "expected"), [
    ("https://codeforces.com/contest/1234/problem/a", "codeforces:1234A"),
    ("http://www.codeforces.com/problemset/problem/1234/A/", "codeforces:1234A"),
    ("https://codeforces.com/gym/100001/problem/B1", "codeforces:100001B1"),
    ("https://atcoder.jp/contests/abc100/tasks/abc100_a", "atcoder:abc100_a"),
    ("https://www.luogu.com.cn/problem/CF1234A", "codeforces:1234A"),
    ("https://www.luogu.com.cn/problem/AT_abc100_a", "atcoder:abc100_a"),
    ("https://www.luogu.com.cn/problem/P1001", "luogu:P1001"),
    ("https://www.codechef.com/problems/flow001", "codechef:FLOW001"),
    ("https://www.codechef.com/START1/problems/ABC", "codechef:ABC"),
    ("https://www.spoj.com/problems/prime1/", "spoj:PRIME1"),
    ("https://onlinejudge.u-aizu.ac.jp/problems/0001", "aizu:0001"),
    ("http://judge.u-aizu.ac.jp/onlinejudge/description.jsp?id=ALDS1_1_A", "aizu:ALDS1_1_A"),
    ("https://WWW.Example.org/a/b/?y=2&x=1", "url:example.org/a/b?x=1&y=2"),
    ("", ""),
])
def test_platform_ids_name_the_original_problem(url, expected):
    assert platform_id_from_url(url) == expected


def test_a_mirror_is_not_the_original():
    assert is_original("Codeforces", "codeforces:4A")
    assert not is_original("luogu", "codeforces:4A")
    assert not is_original("example", "url:example.org/x")
    assert platform_normalise("Luogu-Main") == "luogu"


@pytest.mark.parametrize(("text", "ms"), [
    ("2 seconds", 2000), ("1 second", 1000), ("1.5 s", 1500), ("500 ms", 500), (2, 2000), (2.5, 2500),
    ("3000", 3000), (None, None), ("None", None), ("", None),
])
def test_time_limits(text, ms):
    assert time_limit_ms(text) == ms


@pytest.mark.parametrize(("text", "mb"), [
    ("256 megabytes", 256), ("64 MB", 64), ("262144 KB", 256), ("1 GB", 1024), (268435456, 256), (512, 512),
    ("1024", 1024), (None, None),
])
def test_memory_limits(text, mb):
    assert memory_limit_mb(text) == mb


def test_unreadable_limits_raise():
    with pytest.raises(ValueError, match="not a time limit"):
        time_limit_ms("forever")
    with pytest.raises(ValueError, match="not a memory limit"):
        memory_limit_mb(True)


@pytest.mark.parametrize(("code", "language"), [
    ("#include <bits/stdc++.h>\nusing namespace std;\nint main(){}\n", "cpp"),
    ("import java.util.*;\npublic class Main { public static void main(String[] a) {} }\n", "java"),
    ("n = int(input())\nprint(n * 2)\n", "python3"),
    ("n = input()\nprint n * 2\n", "python2"),
    ("n = int(raw_input())\nfor i in xrange(n): print i\n", "python2"),
    ("fn main() { println!(\"hi\"); }", "other"),
])
def test_language_detection(code, language):
    assert detect_language(code) == language


def test_language_labels_and_reliability_ranks():
    assert language_from_label("PyPy 3") == "python3"
    assert language_from_label("GNU C++17") == "cpp"
    assert language_from_label("python", "print 1\n") == "python2"
    assert language_from_label("javascript") == "other"
    ranks = [reliability_rank(s) for s in ("atcoder_submission", "atcoder_editorial", "codecontests",
                                            "luogu_editorial", "taco_verified", "taco", "someone")]
    assert ranks == [1, 1, 2, 3, 4, 5, 6]
    assert reliability_rank("taco", "verified") == 4
