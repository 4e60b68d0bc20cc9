"""Finding the program in a model's completion, as the server and the client both do it.

A completion is prose, maybe a <think> block, and one or more fenced code blocks, decoded
the way trainers decode it: OpenRLHF and others keep special tokens (``skip_special_tokens
=False``), so the chat template's end-of-turn token and padding follow the answer, often
right after the closing fence (```` ```<|im_end|> ````); some tokenizers and Windows-made
data end lines with CRLF or CR. So, before anything else:

- line ends become LF;
- markup that looks like a special token is never part of a program: the unambiguous
  forms (``<|...|>`` of ChatML / Llama 3 / Phi / GLM, DeepSeek's ``<｜...｜>``) end a code
  block wherever they appear; tag-like markup (``</s>``, ``<eos>``, ``<end_of_turn>``,
  ``[/INST]``...) is allowed after a closing fence on its line and is stripped from the end
  of an unclosed block or of a fence-less answer. This is by shape, not by a list of names,
  so the next model family's token works too.

Then the program is the last fenced block whose label names a language we run (or, when
the caller asks for a language, the last block labelled with it); an unlabelled block
counts when no labelled one does. Labels match in any case. Fences inside the reasoning
are ignored: a model that drafts code while thinking is judged on its answer, and a
completion that ends inside ``<think>`` has no answer. A completion cut off inside its
final block (the token budget ran out) still yields that block, marked
``incomplete_fenced``. A completion with no fence at all is taken whole (``heuristic``);
one without code yields ``empty`` with ``reason`` saying why, which the caller scores 0
without running anything.

Pure Python, no dependency: the server imports it too, so both sides agree.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

# Fence labels (lower-cased) and SandboxFusion's language names -> our language names.
LANGUAGE_ALIASES: dict[str, str] = {
    "python": "python3", "python3": "python3", "py": "python3", "py3": "python3", "pypy": "python3",
    "pypy3": "python3",
    "cpp": "cpp", "c++": "cpp", "cc": "cpp", "cxx": "cpp", "c++17": "cpp", "c++20": "cpp", "cpp17": "cpp",
    "cpp20": "cpp", "c++14": "cpp", "cpp14": "cpp", "c++11": "cpp", "cpp11": "cpp", "c++23": "cpp",
    "java": "java",
    # C is judged as C (gcc), never as C++: SandboxFusion's extraction labels ```c blocks "c" too
    "c": "c", "c99": "c", "c11": "c", "c17": "c", "gnu11": "c", "gnu17": "c",
}
LANGUAGES = ("python3", "c", "cpp", "java")

# Special tokens that no program of ours contains: <|im_end|>, <|eot_id|>, <|end|>, <|user|>,
# <|endoftext|>, DeepSeek's <｜end▁of▁sentence｜> (full-width bars).
_HARD_TOKEN = re.compile(r"<\|[^\s|<>]{1,80}\|>|<｜[^\n｜<>]{1,80}｜>")
# Tag-like markup: </s>, <eos>, <end_of_turn>, <|...|>, [/INST]; code may contain these
# shapes (vector<int>), so they only count on a fence line or at the very end.
_TAG = r"(?:<\|[^\s|<>]{1,80}\|>|<｜[^\n｜<>]{1,80}｜>|</?[A-Za-z_][\w\-.:|]{0,63}>|\[/?[A-Z_]{2,16}\])"
_TAG_AT_END = re.compile(rf"{_TAG}\Z")
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
# What may stand before an opening fence on its line (indentation, a role's start token).
_FENCE_PREFIX = re.compile(rf"(?:[ \t]|{_TAG})*")
# A fence may follow a special token on its line: the generation prompt's end glued to the
# response (``[/INST]```python``, ``<|im_sep|>```cpp``) is a line boundary.
_TAG_BEFORE = re.compile(rf"{_TAG}[ \t]*\Z")
# Where a chat template opens the assistant's turn (the end of the generation prompt): a
# start-of-turn token followed by the assistant's role name, a special token naming that role,
# or Mistral / Llama 2's [/INST]. By shape, so the next family's template works too:
# <|im_start|>assistant, <|start_header_id|>assistant<|end_header_id|>, <start_of_turn>model,
# <｜Assistant｜>, <|assistant|>, <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>, [/INST].
_ROLE = r"(?:assistant|model|chatbot|bot|gpt)"
_ASSISTANT_TURN = re.compile(
    rf"(?:<\|[^\s|<>]{{1,40}}\|>|<｜[^\n｜<>]{{1,40}}｜>|<start_of_turn>)[ \t]*{_ROLE}\b"
    rf"|<[|｜][^\s|｜<>]{{0,20}}{_ROLE}[^\s|｜<>]{{0,20}}[|｜]>"
    r"|\[/INST\]", re.I)
# What closes the role header (the header's end token, a separator, the line break).
_HEADER_REST = re.compile(rf"(?:[ \t]*{_TAG})*[ \t]*\n?")
_PROMPT_TAIL = 256
# Reasoning sections: <think> (DeepSeek-R1, Qwen3), <thinking>, <reasoning>, <thought>, Kimi's
# ◁think▷, the <|begin_of_thought|> of OpenThoughts / Sky-T1 and gpt-oss's analysis channel (its
# answer is the final channel). A draft in them is never the answer.
_REASONING = r"(?:think|thinking|reasoning|thought)"
_THINK_OPEN = re.compile(rf"<{_REASONING}>|◁think▷|<\|begin_of_thought\|>|<\|channel\|>\s*analysis", re.I)
_THINK_CLOSE = re.compile(rf"</{_REASONING}>|◁/think▷|<\|end_of_thought\|>|<\|channel\|>\s*final", re.I)


@dataclass(frozen=True)
class Extracted:
    code: str
    language: str | None  # ours (python3, c, cpp, java); None when the block has no known label
    kind: str  # fenced, incomplete_fenced, heuristic, empty (SandboxFusion's extracted_type)
    reason: str = ""  # why there is no program (kind == "empty")


def language_name(label: str | None) -> str | None:
    """Our language name for a fence label or a SandboxFusion language name; None if unknown."""
    if not label:
        return None
    return LANGUAGE_ALIASES.get(label.strip().lower())


def normalise(text: str) -> str:
    """LF line ends (CRLF and lone CR are what some decoders and datasets produce)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_markup(text: str) -> str:
    """``text`` without the whitespace and special-token markup at its end."""
    # A walk back over bounded windows, not one regex over the whole text: a completion of a
    # million spaces or a thousand pad tokens must cost linear time.
    end = len(text.rstrip())
    while end and text[end - 1] in ">]":
        window = text[max(0, end - 200):end]
        tag = _TAG_AT_END.search(window)
        if tag is None:
            break
        end -= len(window) - tag.start()
        while end and text[end - 1].isspace():
            end -= 1
    return text[:end]


def _closing(fence: str) -> re.Pattern[str]:
    # A closing fence may carry the end-of-turn token(s) on its line: ```<|im_end|>
    return re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}(?:[ \t]|{_TAG})*$", re.M)


def _body(raw: str, closed: bool) -> str:
    hard = _HARD_TOKEN.search(raw)
    if hard is not None:  # the model ended its turn inside the block
        raw, closed = raw[:hard.start()], False
    if not closed:
        # Cut off or ended with a token: drop the markup, and a fence glued to the last line.
        raw = strip_markup(raw)
        raw = re.sub(r"[ \t]*(?:`{3,}|~{3,})\Z", "", raw)
        raw = strip_markup(raw)
    return raw


def _opening(text: str, position: int) -> tuple[str, str, int, int] | None:
    """(fence, label, where its body starts, its indentation) of the next opening fence; each
    line is looked at once, so a line full of backticks costs linear time."""
    while (found := _FENCE_RUN.search(text, position)) is not None:
        line_start = text.rfind("\n", 0, found.start()) + 1
        line_end = text.find("\n", found.end())
        rest = text[found.end():] if line_end == -1 else text[found.end():line_end]
        if "`" not in rest or found.group()[0] == "~":
            if (_FENCE_PREFIX.fullmatch(text, line_start, found.start())
                    or _TAG_BEFORE.search(text[max(line_start, found.start() - 200):found.start()])):
                label = rest.strip().lstrip("{.").split(None, 1)[0].rstrip("}") if rest.strip() else ""
                indent = found.start() - line_start if text[line_start:found.start()].strip(" ") == "" else 0
                return found.group(), label, len(text) if line_end == -1 else line_end + 1, indent
        if line_end == -1:
            return None
        position = line_end + 1
    return None


def _blocks(text: str) -> list[tuple[str, str, bool]]:
    """(label, body, closed) of every fenced block, in order."""
    out = []
    position = 0
    while (opening := _opening(text, position)) is not None:
        fence, label, start, indent = opening
        end = _closing(fence).search(text, start)
        if end is None:
            out.append((label, _dedent(_body(text[start:], False), indent), False))
            break
        body = text[start:end.start()]
        hard = _HARD_TOKEN.search(body)
        out.append((label, _dedent(_body(body, hard is None), indent), hard is None))
        position = end.end()
    return out


def _dedent(body: str, indent: int) -> str:
    # A fence indented N spaces (a block inside a list item) has its content indented with it:
    # up to N spaces come off each line, as CommonMark reads it (Python needs it).
    return re.sub(rf"^ {{1,{indent}}}", "", body, flags=re.M) if indent else body


def response_of(query: str, prompt: str | None = None) -> str:
    """The response in a trainer's decoded sequence (prompt + response, special tokens kept).

    After ``prompt`` where the query holds it verbatim. Otherwise (no prompt given, or the
    decoder changed it: a BOS token, spacing, the trainer cut the prompt's start to fit its
    length) after the last place where the chat template opens the assistant's turn, else
    after the prompt's tail; a query with none of these is all response. Never the prompt's
    own code blocks (statements hold samples in fences) in place of the answer."""
    if prompt:
        at = query.find(prompt)
        if at >= 0:
            return query[at + len(prompt):]
    turn = None
    for turn in _ASSISTANT_TURN.finditer(query):  # noqa: B007  (the last one)
        pass
    if turn is not None:
        rest = _HEADER_REST.match(query, turn.end())
        return query[rest.end() if rest else turn.end():]
    if prompt:
        tail = prompt[-_PROMPT_TAIL:]
        at = query.find(tail)
        if at >= 0:
            return query[at + len(tail):]
    return query


def _answer(text: str) -> tuple[str, str]:
    """The answer part of a completion (after its reasoning) and, when there is none, why."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    opened = _THINK_OPEN.search(text)
    if opened is not None:
        before = text[:opened.start()]
        if not strip_markup(before).strip():
            return "", "the completion ended inside <think> (no answer after the reasoning)"
        text = before
    return text, ""


def _heuristic_text(text: str) -> str:
    # Whole text without special tokens: the last stretch between them that has content.
    parts = [strip_markup(p) for p in _HARD_TOKEN.split(text)]
    parts = [p.strip("\n") for p in parts if p.strip()]
    return parts[-1] if parts else ""


def extract_code(completion: str, *, language: str | None = None, default_language: str | None = None) -> Extracted:
    """The program in ``completion``; ``language`` (ours or SandboxFusion's name) picks blocks with that label."""
    wanted = language_name(language) if language else None
    fallback = wanted or default_language
    answer, why = _answer(normalise(completion))
    if why:
        return Extracted("", fallback, "empty", why)
    blocks = _blocks(answer)
    if not blocks:
        code = _heuristic_text(answer)
        if not code.strip():
            return Extracted("", fallback, "empty", "the completion is blank")
        return Extracted(code + "\n", fallback, "heuristic")
    labelled = [(language_name(label), body, closed) for label, body, closed in blocks]
    if wanted:
        chosen = [b for b in labelled if b[0] == wanted] or [b for b in labelled if b[0] is None]
    else:
        chosen = [b for b in labelled if b[0] is not None] or labelled
    if not chosen:
        return Extracted("", wanted, "empty", f"no code block labelled {language}")
    found, body, closed = chosen[-1]
    if not body.strip():
        return Extracted("", found or fallback, "empty", "the code block is empty")
    return Extracted(body if body.endswith("\n") else body + "\n", found or fallback,
                     "fenced" if closed else "incomplete_fenced")


# What a naive splitter on ``` leaves of a fence's label line ("c++", "`cpp" of a ````cpp fence).
_LABEL_LINE = re.compile(r"\A[ \t]*\n?[ \t]*[`~]*([A-Za-z+0-9]{1,12})[ \t]*\n")
_CPP = re.compile(r"^[ \t]*#[ \t]*include\b|\b(?:int|signed|void)\s+main\s*\(|\busing\s+namespace\s+std\b", re.M)
_JAVA = re.compile(r"\bstatic\s+(?:public\s+)?void\s+main\s*\(\s*(?:final\s+)?String")


def strip_label_line(code: str) -> str:
    """``code`` without a first line that only names a language (``c++``): what a naive
    splitter on ``` leaves of a fence (verl's built-in reward keeps labels it cannot parse)."""
    found = _LABEL_LINE.match(code)
    return code[found.end():] if found and language_name(found.group(1)) else code


_PARSE_LOCK = threading.Lock()


def guess_language(code: str, declared: str) -> str:
    """The language ``code`` is written in when a caller declared ``declared`` (ours).

    verl's built-in reward declares every program Python, whatever its fence said. A
    program that Python cannot parse and that has C++'s (``#include``, ``int main(``) or
    Java's (``static void main(String``) shape is run as that language; any program Python
    parses stays Python, so no correct Python program is ever moved."""
    label = _LABEL_LINE.match(code)
    if label and language_name(label.group(1)):
        return language_name(label.group(1)) or declared
    if declared != "python3":
        return declared
    import ast

    try:
        # one parse at a time in a process: CPython 3.11's AST conversion keeps its recursion
        # count in state the interpreter's threads share, and two parses in two threads (a server
        # answering verl's concurrent calls) raised "SystemError: AST constructor recursion depth
        # mismatch" (an HTTP 500 for a right program)
        with _PARSE_LOCK:
            ast.parse(code)
        return declared
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    if _JAVA.search(code):
        return "java"
    if _CPP.search(code):
        return "cpp"
    return declared
