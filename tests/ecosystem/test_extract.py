"""The one code extractor (server and client) against completions as trainers decode them:
chat-template end tokens kept (skip_special_tokens=False), CRLF / CR line ends, cut-off
blocks, several blocks, reasoning sections, labels in any case."""

from __future__ import annotations

import time

import pytest

from hardtests_client.extract import extract_code, guess_language, strip_label_line

PROGRAM = "a, b = map(int, input().split())\nprint(a + b)\n"
CPP = "#include <bits/stdc++.h>\nusing namespace std;\nint main() { vector<int> v{1}; cout << v[0] << endl; }\n"

# How each family's chat template ends an assistant turn (and what may follow it when a
# trainer decodes the whole sequence: padding, the next turn's start).
END_TOKENS = {
    "qwen_chatml": "<|im_end|>",
    "qwen_padding": "<|im_end|>\n<|endoftext|><|endoftext|>",
    "llama3": "<|eot_id|>",
    "llama3_tool": "<|eom_id|>",
    "mistral_llama2": "</s>",
    "deepseek": "<｜end▁of▁sentence｜>",
    "gemma": "<end_of_turn>",
    "gemma_eos": "<end_of_turn>\n<eos>",
    "phi": "<|end|>",
    "phi_endoftext": "<|end|><|endoftext|>",
    "glm_user": "<|user|>",
    "glm_endoftext": "<|endoftext|>",
    "command_r": "<|END_OF_TURN_TOKEN|>",
    "inst": "[/INST]",
    # Not any model's name: the extractor goes by the shape of special tokens.
    "unknown_family": "<|turn_done|>",
}
LINE_ENDS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
# Where the token goes: glued to the fence, on the next line, after trailing prose.
PLACES = {"glued": "", "next_line": "\n", "after_prose": "\nHope this helps.\n", "space": " "}


def _with(nl: str, text: str) -> str:
    return text.replace("\n", nl)


@pytest.mark.parametrize("token", END_TOKENS.values(), ids=END_TOKENS.keys())
@pytest.mark.parametrize("nl", LINE_ENDS.values(), ids=LINE_ENDS.keys())
def test_end_tokens_after_the_closing_fence(token, nl):
    for place in PLACES.values():
        completion = _with(nl, f"Here it is.\n```Python\n{PROGRAM}```{place}") + token
        found = extract_code(completion)
        assert (found.code, found.language, found.kind) == (PROGRAM, "python3", "fenced"), (place, found)


@pytest.mark.parametrize("token", END_TOKENS.values(), ids=END_TOKENS.keys())
@pytest.mark.parametrize("nl", LINE_ENDS.values(), ids=LINE_ENDS.keys())
def test_end_tokens_in_unclosed_blocks_and_fence_less_answers(token, nl):
    # The model ended its turn without closing the fence, or glued the fence to its last line.
    unclosed = extract_code(_with(nl, f"```cpp\n{CPP}") + token)
    assert (unclosed.code, unclosed.language, unclosed.kind) == (CPP, "cpp", "incomplete_fenced")
    glued = extract_code(_with(nl, f"```cpp\n{CPP.rstrip()}```") + token)
    assert glued.code == CPP
    bare = extract_code(_with(nl, PROGRAM) + token, default_language="python3")
    assert (bare.code, bare.kind) == (PROGRAM, "heuristic")
    # A reasoning model: the draft in <think> is not the answer.
    thought = extract_code(_with(nl, f"<think>\n```python\nprint(0)\n```\n</think>\n\n```py\n{PROGRAM}```") + token)
    assert thought.code == PROGRAM


@pytest.mark.parametrize("label", ["python", "Python", "PYTHON", "py", "Python3", "{.python}"])
def test_labels_in_any_case(label):
    found = extract_code(f"```{label}\n{PROGRAM}```")
    assert (found.code, found.language) == (PROGRAM, "python3")


def test_several_blocks_and_languages():
    two = f"First try:\n```python\nprint(0)\n```\nBetter:\n```c++\n{CPP}```\n<|im_end|>"
    assert (extract_code(two).code, extract_code(two).language) == (CPP, "cpp")
    assert extract_code(two, language="python").code == "print(0)\n"
    # An unlabelled block (sample output) after the program does not replace it.
    sample = f"```python\n{PROGRAM}```\nOutput:\n```\n3\n```</s>"
    assert extract_code(sample).code == PROGRAM
    # Tildes and longer fences (a fence inside the program's string) work too.
    assert extract_code(f"~~~python\n{PROGRAM}~~~<|eot_id|>").code == PROGRAM
    inner = 'print("```")\n'
    assert extract_code(f"````python\n{inner}````<|im_end|>").code == inner


def test_no_code_is_empty_with_a_reason_and_never_markup():
    cases = {
        "<think>\nI should write ```python\nprint(1)\n``` maybe": "<think>",
        "   \r\n<|im_end|>": "blank",
        "```python\n```<|im_end|>": "empty",
        "```python\n<|im_end|>": "empty",
        "```cpp\nint main(){}\n```": "labelled python",
    }
    for completion, why in cases.items():
        found = extract_code(completion, language="python" if "cpp" in completion else None)
        assert found.kind == "empty" and found.code == "" and why in found.reason, (completion, found)
    # Whatever is extracted holds no special-token markup.
    for token in END_TOKENS.values():
        for completion in (f"```python\n{PROGRAM}{token}```", f"{token}```python\n{PROGRAM}```{token}",
                           f"```python\n{PROGRAM}```\n{token}{token}", f"{PROGRAM}{token}\n{token}"):
            code = extract_code(completion).code
            assert code == PROGRAM, (completion, code)


def test_extraction_is_linear_on_hostile_completions():
    hostile = ["a```" * 200_000, " " * 1_000_000 + "x", "```\n" * 100_000, "<|a|>" * 100_000,
               "```python\n" + "x = 1\n" * 100_000 + "</s>" * 10_000, "\r" * 1_000_000]
    start = time.process_time()
    for text in hostile:
        extract_code(text)
    # About 0.3 s of CPU on a developer machine; a quadratic path would take hours.
    assert time.process_time() - start < 10


def test_language_of_programs_declared_python():
    # verl's built-in reward sends every program as python, and keeps labels it cannot parse.
    assert guess_language(CPP, "python3") == "cpp"
    assert guess_language("c++\n" + CPP, "python3") == "cpp" and strip_label_line("c++\n" + CPP) == CPP
    # Of a four-backtick fence (````cpp) a split on ``` leaves one backtick before the label.
    assert guess_language("`cpp\n" + CPP, "python3") == "cpp" and strip_label_line("`C++17 \n" + CPP) == CPP
    java = "import java.util.*;\npublic class Main {\n  public static void main(String[] args) { }\n}\n"
    assert guess_language(java, "python3") == "java"
    # A program Python parses stays Python, even with C-looking comments.
    commented = "# include <stdio.h>\n# int main(void) is what C would need\nprint(1)\n"
    assert guess_language(commented, "python3") == "python3" and guess_language(PROGRAM, "python3") == "python3"
    assert guess_language("int main( {", "cpp") == "cpp"
