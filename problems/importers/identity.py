"""Recognising one problem across datasets, and reading the limits datasets write as text.

A problem's *platform id* (``codeforces:1234A``, ``atcoder:abc123_a``) names it on the judge
where it was first published, whatever dataset or mirror it arrives from; two rows with the
same platform id are the same problem. Luogu re-hosts Codeforces and AtCoder problems under
its own ids (``CF1234A``, ``AT_abc123_a``), which is the commonest mirror in HardTests, so
those map back to the original judge. A URL that no rule recognises still identifies a
problem (``url:<normalised url>``), which covers "same URL" for every other site.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

_PLATFORM_ALIASES = {
    "cf": "codeforces",
    "codeforces": "codeforces",
    "atcoder": "atcoder",
    "at": "atcoder",
    "luogu": "luogu",
    "luogu-main": "luogu",
    "luogu_main": "luogu",
    "codechef": "codechef",
    "aizu": "aizu",
    "spoj": "spoj",
    "hackerearth": "hackerearth",
    "hackerrank": "hackerrank",
    "codejam": "codejam",
    "geeksforgeeks": "geeksforgeeks",
    "codewars": "codewars",
    "kattis": "kattis",
    "leetcode": "leetcode",
}

_CF_PATHS = (
    re.compile(r"^/(?:contest|gym)/(\d+)/problem/([A-Za-z]\d?)/?$"),
    re.compile(r"^/problemset/problem/(\d+)/([A-Za-z]\d?)/?$"),
)
_ATCODER_PATH = re.compile(r"^/contests/[^/]+/tasks/([A-Za-z0-9_]+)/?$")
_LUOGU_PATH = re.compile(r"^/problem/([A-Za-z0-9_]+)/?$")
_LUOGU_CF = re.compile(r"^CF(\d+)([A-Z]\d?)$")
_LUOGU_AT = re.compile(r"^AT_([a-z0-9_]+)$", re.IGNORECASE)
_CODECHEF_PATH = re.compile(r"^/(?:[A-Za-z0-9_]+/)?problems/([A-Za-z0-9_]+)/?$")
_SPOJ_PATH = re.compile(r"^/problems/([A-Za-z0-9_]+)/?$")
_AIZU_PATH = re.compile(r"^/(?:problems|onlinejudge/description\.jsp)/?([A-Za-z0-9_]*)/?$")


def platform_normalise(name: str | None) -> str:
    """A dataset's platform label in the project's spelling (``Codeforces`` -> ``codeforces``)."""
    key = (name or "").strip().lower().replace(" ", "")
    return _PLATFORM_ALIASES.get(key, key)[:50]


def url_normalise(url: str) -> str:
    """Scheme, ``www.``, case of the host, query order and trailing slashes do not make another problem."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.").removeprefix("m.")
    path = parts.path.rstrip("/")
    query = "&".join(sorted(q for q in parts.query.split("&") if q))
    return f"{host}{path}" + (f"?{query}" if query else "")


def _luogu_id(luogu_pid: str) -> str:
    if m := _LUOGU_CF.match(luogu_pid):
        return f"codeforces:{m[1]}{m[2]}"
    if m := _LUOGU_AT.match(luogu_pid):
        return f"atcoder:{m[1].lower()}"
    return f"luogu:{luogu_pid}"


def platform_id_from_url(url: str) -> str:
    """The platform id a URL names, or ``url:<normalised>`` when no rule knows the site; "" for no URL."""
    if not url or not url.strip():
        return ""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.").removeprefix("m.")
    path = parts.path
    if host.endswith("codeforces.com"):
        for pattern in _CF_PATHS:
            if m := pattern.match(path):
                return f"codeforces:{m[1]}{m[2].upper()}"
    elif host.endswith("atcoder.jp"):
        if m := _ATCODER_PATH.match(path):
            return f"atcoder:{m[1].lower()}"
    elif host.endswith("luogu.com.cn") or host.endswith("luogu.org"):
        if m := _LUOGU_PATH.match(path):
            return _luogu_id(m[1])
    elif host.endswith("codechef.com"):
        if m := _CODECHEF_PATH.match(path):
            return f"codechef:{m[1].upper()}"
    elif host.endswith("spoj.com"):
        if m := _SPOJ_PATH.match(path):
            return f"spoj:{m[1].upper()}"
    elif host.endswith("u-aizu.ac.jp"):
        aizu_id = (parse_qs(parts.query).get("id") or [""])[0]
        m = _AIZU_PATH.match(path)
        if m and (m[1] or aizu_id):
            return f"aizu:{m[1] or aizu_id}"
    return f"url:{url_normalise(url)}"[:200]


def platform_id_codeforces(contest_id: int | str | None, index: str | None) -> str:
    if contest_id is None or contest_id in ("", 0, "0") or not index:
        return ""
    return f"codeforces:{int(contest_id)}{str(index).strip().upper()}"


def is_original(platform: str, platform_id: str) -> bool:
    """Whether a row comes from the judge that first published the problem (not a mirror)."""
    if not platform_id or platform_id.startswith("url:"):
        return False
    return platform_id.split(":", 1)[0] == platform_normalise(platform)


_NUMBER = r"(\d+(?:\.\d+)?)"
_TIME = re.compile(_NUMBER + r"\s*(ms|msec|milliseconds?|s|sec|secs|seconds?)?\.?$", re.IGNORECASE)
_MEMORY = re.compile(_NUMBER + r"\s*(b|bytes?|kb|kib|kilobytes?|mb|mib|megabytes?|m|gb|gib|gigabytes?)?\.?$",
                     re.IGNORECASE)


def time_limit_ms(value: object) -> int | None:
    """``"2 seconds"``, ``"1.5 s"``, ``"500 ms"``, ``2`` -> milliseconds; None when absent.

    A bare number is seconds below 100 and milliseconds from 100 up: no judge has a limit of
    100 seconds, and no dataset writes 100 milliseconds without a unit. Raises ValueError
    on text it cannot read, so a typo is reported instead of becoming a default.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null", "nan")):
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time limit: {value!r}")
    if isinstance(value, int | float):
        number, unit = float(value), ""
    else:
        m = _TIME.match(str(value).strip())
        if not m:
            raise ValueError(f"not a time limit: {value!r}")
        number, unit = float(m[1]), (m[2] or "").lower()
    if unit.startswith("m"):
        return max(1, round(number))
    if unit or number < 100:
        return max(1, round(number * 1000))
    return max(1, round(number))


def memory_limit_mb(value: object) -> int | None:
    """``"256 megabytes"``, ``"262144 KB"``, ``268435456`` bytes, ``256`` -> megabytes; None when absent.

    A bare number is megabytes up to 65536 and bytes above (CodeContests stores bytes).
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null", "nan")):
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a memory limit: {value!r}")
    if isinstance(value, int | float):
        number, unit = float(value), ""
    else:
        m = _MEMORY.match(str(value).strip())
        if not m:
            raise ValueError(f"not a memory limit: {value!r}")
        number, unit = float(m[1]), (m[2] or "").lower()
    if unit.startswith("k"):
        number /= 1024
    elif unit.startswith("g"):
        number *= 1024
    elif unit.startswith("b") or (not unit and number > 65536):
        number /= 1024 * 1024
    return max(1, round(number))
