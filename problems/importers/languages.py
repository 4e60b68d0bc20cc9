"""Programming languages as datasets spell them, detection for code that comes without a label,
and the reliability rank of a solution's source.
"""

from __future__ import annotations

import re
import warnings

from core import pysource
from problems.models import Language

_NAMES = {
    "python3": Language.PYTHON3,
    "python 3": Language.PYTHON3,
    "py3": Language.PYTHON3,
    "pypy3": Language.PYTHON3,
    "pypy 3": Language.PYTHON3,
    "python2": Language.PYTHON2,
    "python 2": Language.PYTHON2,
    "py2": Language.PYTHON2,
    "pypy2": Language.PYTHON2,
    "pypy": Language.PYTHON2,
    "cpp": Language.CPP,
    "c++": Language.CPP,
    "c++11": Language.CPP,
    "c++14": Language.CPP,
    "c++17": Language.CPP,
    "c++20": Language.CPP,
    "gnu c++": Language.CPP,
    "g++": Language.CPP,
    "cxx": Language.CPP,
    "c": Language.C,
    "gnu c": Language.C,
    "gnu c11": Language.C,
    "gcc": Language.C,
    "c11": Language.C,
    "c17": Language.C,
    "java": Language.JAVA,
    "java8": Language.JAVA,
    "java 8": Language.JAVA,
    "java11": Language.JAVA,
    "java 11": Language.JAVA,
    "java17": Language.JAVA,
}

_CPP_MARKERS = re.compile(r"^\s*#\s*include\b|\busing\s+namespace\s+std\b|\bint\s+main\s*\(|\bstd::", re.MULTILINE)
_JAVA_MARKERS = re.compile(r"\bpublic\s+static\s+void\s+main\s*\(|^\s*import\s+java\.|\bSystem\.out\.", re.MULTILINE)
_PY2_MARKERS = re.compile(r"^\s*print\s+[^\s(=]|\braw_input\s*\(|\bxrange\s*\(|^\s*exec\s+\"", re.MULTILINE)


def language_from_label(label: str | None, code: str = "") -> str:
    """A dataset's language label in the project's choices; plain "python" is told apart by parsing."""
    key = (label or "").strip().lower()
    if key in _NAMES:
        return _NAMES[key]
    if key in ("python", "py"):
        return _python_version(code)
    if key.startswith("python3") or key.startswith("pypy3"):
        return Language.PYTHON3
    if key.startswith("python2") or key.startswith("pypy2"):
        return Language.PYTHON2
    if key.startswith("c++") or key.startswith("gnu c++") or key.startswith("clang++"):
        return Language.CPP
    if key.startswith("java") and not key.startswith("javascript"):
        return Language.JAVA
    return Language.OTHER


def _python_version(code: str, *, strict: bool = False) -> str:
    if not strict and not _PY2_MARKERS.search(code):
        # Labelled Python without a Python 2 statement is taken as Python 3 unparsed: parsing
        # every solution of a 50,000-problem dataset (twice: check, then write) costs minutes.
        return Language.PYTHON3
    try:
        # Parsing only; the code is never run here. SyntaxWarnings from odd escapes are noise.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pysource.parse(code)
    except (SyntaxError, ValueError):
        return Language.PYTHON2 if _PY2_MARKERS.search(code) else Language.OTHER
    return Language.PYTHON3


def detect_language(code: str) -> str:
    """Guess the language of unlabelled code (Klear ships solutions without one).

    C++ and Java have unmistakable markers; anything else that parses as Python 3 is Python 3,
    and Python that only parses with Python 2 statements is Python 2.
    """
    if _JAVA_MARKERS.search(code) and re.search(r"\bclass\s+\w+", code):
        return Language.JAVA
    if _CPP_MARKERS.search(code):
        return Language.CPP
    return _python_version(code, strict=True)


# The reliability order of HardTests' oracle sources (paper, section 3): AtCoder's own
# submissions and editorials are checked by the judge that set the problem; CodeContests'
# solutions were accepted on Codeforces; Luogu editorials are community-written but reviewed;
# TACO solutions that HardTests verified against tests come before the rest of TACO.
RANK_ATCODER = 1
RANK_CODECONTESTS = 2
RANK_LUOGU = 3
RANK_TACO_VERIFIED = 4
RANK_TACO = 5
RANK_OTHER = 6


def reliability_rank(source: str | None, source_reliability: str | None = None) -> int:
    """Rank (1 = most trusted) of a solution's source, as HardTests labels sources."""
    text = f"{source or ''} {source_reliability or ''}".lower()
    if "atcoder" in text:
        return RANK_ATCODER
    if "codecontests" in text or "code_contests" in text or "code-contests" in text:
        return RANK_CODECONTESTS
    if "luogu" in text:
        return RANK_LUOGU
    if "taco" in text:
        return RANK_TACO_VERIFIED if "verified" in text and "unverified" not in text else RANK_TACO
    return RANK_OTHER
