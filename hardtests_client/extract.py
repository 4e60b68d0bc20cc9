"""Finding the program in a model's completion, as the server and the client both do it.

A completion is prose, maybe a <think> block, and one or more fenced code blocks. The
program is the last fenced block whose label names a language we run (or, when the
caller asks for a language, the last block labelled with it); an unlabelled block counts
when no labelled one does. Fences inside the reasoning are ignored: a model that drafts
code while thinking is judged on its answer. A completion cut off inside its final block
(the token budget ran out) still yields that block, marked ``incomplete_fenced``.
A completion with no fence at all is taken whole (``heuristic``); one that is blank
yields no program (``empty``), which the caller scores 0 without running anything.

Pure Python, no dependency: the server imports it too, so both sides agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Fence labels (lower-cased) and SandboxFusion's language names -> our language names.
LANGUAGE_ALIASES: dict[str, str] = {
    "python": "python3", "python3": "python3", "py": "python3", "py3": "python3", "pypy": "python3",
    "pypy3": "python3",
    "cpp": "cpp", "c++": "cpp", "cc": "cpp", "cxx": "cpp", "c++17": "cpp", "c++20": "cpp", "cpp17": "cpp",
    "cpp20": "cpp",
    "java": "java",
}
LANGUAGES = ("python3", "cpp", "java")

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*\n", re.M)
_THINK_END = re.compile(r"</think(?:ing)?>", re.I)


@dataclass(frozen=True)
class Extracted:
    code: str
    language: str | None  # ours (python3, cpp, java); None when the block has no known label
    kind: str  # fenced, incomplete_fenced, heuristic, empty (SandboxFusion's extracted_type)


def language_name(label: str | None) -> str | None:
    """Our language name for a fence label or a SandboxFusion language name; None if unknown."""
    if not label:
        return None
    return LANGUAGE_ALIASES.get(label.strip().lower())


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(label, body, closed) of every fenced block, in order."""
    out = []
    position = 0
    while (opening := _FENCE.search(text, position)) is not None:
        fence, label = opening.group(1), opening.group(2)
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        end = closing.search(text, opening.end())
        if end is None:
            out.append((label, text[opening.end():], False))
            break
        out.append((label, text[opening.end():end.start()], True))
        position = end.end()
    return out


def extract_code(completion: str, *, language: str | None = None, default_language: str | None = None) -> Extracted:
    """The program in ``completion``; ``language`` (ours or SandboxFusion's name) picks blocks with that label."""
    answer = completion
    thinks = list(_THINK_END.finditer(answer))
    if thinks:
        answer = answer[thinks[-1].end():]
    wanted = language_name(language) if language else None
    blocks = _blocks(answer)
    if not blocks:
        code = answer.strip("\n")
        if not code.strip():
            return Extracted("", wanted or default_language, "empty")
        return Extracted(code + "\n", wanted or default_language, "heuristic")
    labelled = [(language_name(label), body, closed) for label, body, closed in blocks]
    if wanted:
        chosen = [b for b in labelled if b[0] == wanted] or [b for b in labelled if b[0] is None]
    else:
        chosen = [b for b in labelled if b[0] is not None] or labelled
    if not chosen:
        return Extracted("", wanted, "empty")
    found, body, closed = chosen[-1]
    if not body.strip():
        return Extracted("", found or wanted or default_language, "empty")
    return Extracted(body if body.endswith("\n") else body + "\n", found or wanted or default_language,
                     "fenced" if closed else "incomplete_fenced")
