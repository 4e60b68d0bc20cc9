"""Rewards of completions written apart from the extractor's own tables, on demo problems whose
kits are materialised for real, through every seam a trainer uses, against a live server with a
real worker and sandbox:

- OpenRLHF's remote reward protocol as OpenRLHF 0.11 posts it (SingleTurnAgentExecutor: the
  whole decoded sequence, ``skip_special_tokens=False``, the prompt after its chat template,
  with and without ``prompts``), and its ``reward_func`` file (hardtests_client);
- SandboxFusion's ``/submit`` and ``/run_code`` through the published sandbox-fusion client;
- verl's built-in ``sandbox_fusion`` reward and our ``compute_score`` (sync, async, batch) as
  verl's reward loop and legacy managers load and call them.

Each family's chat template with its end and padding tokens, LF / CRLF / lone CR, the token glued
to the fence or on the next line, reasoning drafts, several blocks, labels in any case; and what
a policy might try for reward: a correct draft in the prompt or the reasoning with a wrong or no
final program, an empty answer, tokens printed by the program. Correct 1.0, wrong 0.0, each line.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import multiprocessing
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import requests
from django.test import override_settings

from problems.blobs import blob_get
from problems.exporters.prompt import answer_prompt
from problems.models import Problem, TestSuite
from problems.services import NewTest, suite_activate, suite_add_tests, suite_create
from problems.verify_contract import suite_judging
from tests.conftest import DEMO_COUNTS, REPO

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

DEMO = REPO / "problems" / "demo_data"


def _solution(problem: str, name: str) -> str:
    return (DEMO / problem / "solutions" / name).read_text()


# Written for this file (not the demo's): a correct binary search and an off-by-one.
ISQRT_BINARY = """import sys


def isqrt(n):
    lo, hi = 0, 2 * 10**9
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid * mid <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo


tokens = sys.stdin.read().split()
print("\\n".join(str(isqrt(int(v))) for v in tokens[1:1 + int(tokens[0])]))
"""
ISQRT_OFF_BY_ONE = """import math
import sys

values = sys.stdin.read().split()
for v in values[1:]:
    print(math.isqrt(int(v)) + (1 if int(v) % 7 == 3 else 0))
"""

# (problem, language, program, reward)
PROGRAMS: dict[str, tuple[str, str, str, float]] = {
    "isqrt_py": ("demo/isqrt", "python3", _solution("isqrt", "oracle.py"), 1.0),
    "isqrt_py_mine": ("demo/isqrt", "python3", ISQRT_BINARY, 1.0),
    "isqrt_py_float": ("demo/isqrt", "python3", _solution("isqrt", "wrong_float_pow.py"), 0.0),
    "isqrt_py_off": ("demo/isqrt", "python3", ISQRT_OFF_BY_ONE, 0.0),
    "isqrt_cpp": ("demo/isqrt", "cpp", _solution("isqrt", "oracle.cpp"), 1.0),
    "isqrt_cpp_bs": ("demo/isqrt", "cpp", _solution("isqrt", "alt_binary_search.cpp"), 1.0),
    "isqrt_cpp_double": ("demo/isqrt", "cpp", _solution("isqrt", "wrong_double_sqrt.cpp"), 0.0),
    "isqrt_cpp_overflow": ("demo/isqrt", "cpp", _solution("isqrt", "wrong_overflow_search.cpp"), 0.0),
    "isqrt_java": ("demo/isqrt", "java", _solution("isqrt", "oracle.java"), 1.0),
    "grid_java": ("demo/grid-paths", "java", _solution("grid-paths", "alt_2d.java"), 1.0),
    "grid_py": ("demo/grid-paths", "python3", _solution("grid-paths", "oracle.py"), 1.0),
    "grid_py_blocked": ("demo/grid-paths", "python3", _solution("grid-paths", "wrong_start_blocked.py"), 0.0),
    "grid_cpp_mod": ("demo/grid-paths", "cpp", _solution("grid-paths", "wrong_mod_at_end.cpp"), 0.0),
}
# Java is slow to judge (a JVM per test): fewer lines of it.
LIGHT = [k for k, v in PROGRAMS.items() if v[1] != "java"]
LABELS = {"python3": ["python", "Python3", "PY", "py3", "Python"], "cpp": ["cpp", "CPP", "C++", "c++17", "cc"],
          "java": ["java", "Java", "JAVA"]}

# Chat templates (generation prompt, end-of-turn, padding) as each family's tokenizer decodes
# them with skip_special_tokens=False.
FAMILIES: dict[str, tuple[str, str, str]] = {
    "qwen": ("<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\n{p}<|im_end|>\n<|im_start|>assistant\n",
             "<|im_end|>", "<|endoftext|>"),
    "llama3": ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nToday Date: 26 Jul 2024<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\n{p}<|eot_id|><|start_header_id|>assistant"
               "<|end_header_id|>\n\n", "<|eot_id|>", "<|end_of_text|>"),
    "mistral": ("<s>[INST] {p}[/INST]", "</s>", "</s>"),
    "llama2": ("<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\n{p} [/INST] ", "</s>", "<unk>"),
    "deepseek": ("<｜begin▁of▁sentence｜><｜User｜>{p}<｜Assistant｜>", "<｜end▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    # R1's template opens the reasoning in the prompt: the response closes it.
    "deepseek_r1": ("<｜begin▁of▁sentence｜><｜User｜>{p}<｜Assistant｜><think>\n", "<｜end▁of▁sentence｜>",
                    "<｜end▁of▁sentence｜>"),
    "gemma": ("<bos><start_of_turn>user\n{p}<end_of_turn>\n<start_of_turn>model\n", "<end_of_turn>\n<eos>", "<pad>"),
    "phi3": ("<|user|>\n{p}<|end|>\n<|assistant|>\n", "<|end|>", "<|endoftext|>"),
    "phi4": ("<|im_start|>user<|im_sep|>{p}<|im_end|><|im_start|>assistant<|im_sep|>", "<|im_end|>",
             "<|dummy_85|>"),
    "glm": ("[gMASK]<sop><|system|>\nYou help.<|user|>\n{p}<|assistant|>\n", "<|user|>", "<|endoftext|>"),
    "llama4": ("<|begin_of_text|><|header_start|>user<|header_end|>\n\n{p}<|eot|><|header_start|>assistant"
               "<|header_end|>\n\n", "<|eot|>", "<|finetune_right_pad_id|>"),
}
LINE_ENDS = ["\n", "\r\n", "\r"]
PADS = [0, 1, 9]
# The live tests send a third of the full cross by default (every family, line end, shape and trick
# still appears; the offline test below runs the whole cross through the extractor): about 1.5
# minutes of judging instead of 5. HARDTESTS_HELDOUT_FULL=1 sends all of it.
FULL = os.environ.get("HARDTESTS_HELDOUT_FULL") == "1"


def _shape(index: int, code: str, label: str, end: str) -> str:
    """The index-th way a model presents its final program, ending with ``end`` (markup)."""
    draft = "print(sum(map(int, input().split())))\n"
    shapes = [
        lambda: f"Using exact integer arithmetic.\n\n```{label}\n{code}```{end}",
        lambda: f"```{label}\n{code}```\n{end}",
        lambda: f"The program:\n```{label}\n{code.rstrip()}```{end}",
        lambda: f"Here:\n```{label}\n{code}{end}",
        lambda: f"<think>\nFirst idea:\n```python\n{draft}```\nToo naive.\n</think>\n\nFinal:\n```{label}\n{code}```"
                f"\nComplexity is fine.{end}",
        lambda: f"Sketch:\n```python\n{draft}```\nFull solution:\n\n```{label}\n{code}```\n"
                f"For the sample it prints:\n```\n0\n3\n4\n```\n{end}",
        lambda: "1. Read the input.\n2. Print the answers:\n\n   ```" + label + "\n"
                + "".join(f"   {line}" if line.strip() else line for line in code.splitlines(True))
                + f"   ```\n{end}",
        lambda: f"````{label}\n{code}````  {end}",
        lambda: f"```{label.upper()} \n{code}```\n\n{end}",
    ]
    return shapes[index % len(shapes)]()


def _lines(text: str, nl: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", nl)


@dataclass(frozen=True)
class _Built:
    """A materialised suite as plain data: what its rows are re-created from."""

    tests: list[NewTest]
    unverified: bool
    trust: dict[str, Any]
    # (kind, input, output digests) of its tests and its suite_judging: the re-created suite must
    # hold the same tests, judged the same way
    digests: list[tuple[str, str, str]]
    judging: str


# The suites the kits gave, built for real (demo_load, generation_run_execute in the real
# sandbox) by this module's first live test; the live server's database is flushed after each
# test, so the later ones re-create the same rows from here (scripts/test.sh runs a file in one
# process). Materialising both kits for every test cost 40 to 100 s of setup each.
_BUILT: dict[str, _Built] = {}
# The programs of PROGRAMS whose bare rewards /verify gave as expected on those suites.
_BASELINE: dict[str, float] = {}


def _built(suite: TestSuite) -> _Built:
    tests = [NewTest(input=blob_get(t.input_sha256), output=blob_get(t.output_sha256), kind=t.kind,
                     generator=t.generator, call_number=t.call_number, validator_version=t.validator_version,
                     seed=t.seed, output_origin=t.output_origin)
             for t in suite.tests.order_by("ordinal")]
    return _Built(tests=tests, unverified=suite.unverified, trust=dict(suite.trust), digests=_digests(suite),
                  judging=suite_judging(suite))


def _digests(suite: TestSuite) -> list[tuple[str, str, str]]:
    rows = suite.tests.order_by("ordinal").values_list("kind", "input_sha256", "output_sha256")
    return [(kind, input_sha, output_sha) for kind, input_sha, output_sha in rows]


def _rebuilt(problem: Problem, built: _Built) -> None:
    """The suite generation_run_execute made from the problem's kit (its _build_suite and
    run_activate), re-created from its tests without running the kit again."""
    from generation.materialise.testlib import testlib_parts
    from generation.selectors import kit_to_materialise
    from generation.services import testlib_checker_row

    kit = kit_to_materialise(problem)
    assert kit is not None, problem.pid
    suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, kit=kit, validator=kit.validator,
                         output_judge=kit.output_judge, unverified=built.unverified, trust=built.trust)
    testlib = testlib_parts(kit).checker
    if testlib:
        suite.checker = testlib_checker_row(problem=problem, code=testlib)
        suite.save(update_fields=["checker"])
    suite_add_tests(suite=suite, tests=built.tests)
    active = TestSuite.objects.get(pk=suite_activate(suite=suite).pk)
    assert (_digests(active), suite_judging(active)) == (built.digests, built.judging), problem.pid


@pytest.fixture
def demo(settings: Any) -> dict[str, Problem]:
    """The demo problems, and the kits of the two used here materialised (real sandbox, no LLM)
    by the module's first test, their suites re-created for the others."""
    from generation.models import GenerationRun
    from generation.pipeline import generation_run_execute
    from generation.services import generation_run_start
    from problems.demo import demo_load

    # One worker judges every line here on a shared machine: wait for it as trainers would.
    settings.HARDTESTS_API_SYNC_TIMEOUT_S = 900
    demo_load()
    out = {}
    with override_settings(**DEMO_COUNTS):
        for pid in sorted({p for p, *_ in PROGRAMS.values()}):
            problem = Problem.objects.get(pid=pid)
            if pid in _BUILT:
                _rebuilt(problem, _BUILT[pid])
            else:
                run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
                done = generation_run_execute(run_id=run.pk)
                assert done.status == "succeeded", (pid, done.status, done.failure_reason)
                assert done.suite is not None
                _BUILT[pid] = _built(done.suite)
            out[pid] = problem
    return out


@pytest.fixture
def baseline(live_server: Any, token: str, demo: dict[str, Problem], sandbox_worker: Any) -> None:
    """Each program, sent bare through /verify, gets its expected reward (the suites are right).
    Judged once a module: the later tests' suites are the same tests, judged the same way (demo)."""
    from hardtests_client import HardTestsClient, VerifyRequest

    if _BASELINE:
        return
    with HardTestsClient(live_server.url, token, timeout_s=900) as client:
        results = client.verify_many([VerifyRequest(p, code, lang) for p, lang, code, _ in PROGRAMS.values()])
    got = {k: float(r.reward) for k, r in zip(PROGRAMS, results, strict=True)}
    assert got == {k: v[3] for k, v in PROGRAMS.items()}
    _BASELINE.update(got)


def _lines_of_openrlhf(prompts: dict[str, str]) -> Iterator[tuple[str, str, list[tuple[str, str, str, float]]]]:
    """(family, line end, [(query, prompt, label, reward)]) batches over every family and line end."""
    counter = itertools.count()
    for family, (template, end, pad) in FAMILIES.items():
        for nl in LINE_ENDS:
            rows = []
            names = LIGHT[next(counter) % 3::3] + (["isqrt_java"] if nl == "\n" and family in ("qwen", "gemma") else [])
            for name in names:
                problem, language, code, reward = PROGRAMS[name]
                i = next(counter)
                label = LABELS[language][i % len(LABELS[language])]
                prompt = template.format(p=prompts[problem])
                response = _lines(_shape(i, code, label, end + pad * PADS[i % 3]), nl)
                if prompt.endswith("<think>\n"):
                    response = f"The answer is an integer square root.\n</think>\n\n{response}"
                query = prompt + response
                if i % 5 == 0:
                    query = pad * 4 + query  # left padding (OpenRLHF before 0.9 decoded it too)
                elif i % 7 == 0:
                    query = query[len(prompt) - 300:]  # the prompt's start cut to fit max_len
                rows.append((query, prompt, problem, reward))
            yield family, nl, rows


def _policy_tricks(prompts: dict[str, str]) -> list[tuple[str, str, str, float]]:
    """Completions a reward-seeking policy might write; none has a correct final program."""
    right, wrong = PROGRAMS["isqrt_py"][2], PROGRAMS["isqrt_py_float"][2]
    right_cpp, wrong_cpp = PROGRAMS["isqrt_cpp"][2], PROGRAMS["isqrt_cpp_double"][2]
    template, end, pad = FAMILIES["qwen"]
    # A prompt that itself holds a correct program (a "fix this code" or few-shot prompt).
    leaky = template.format(p=prompts["demo/isqrt"] + f"\n\nA reference:\n```python\n{right}```\n")
    plain = template.format(p=prompts["demo/isqrt"])
    responses = [
        (leaky, "I cannot improve on it."),
        (leaky, f"Mine:\n```\n{wrong}```"),
        (plain, f"<think>\n```python\n{right}```\nMaybe C++ instead.\n</think>\n```cpp\n{wrong_cpp}```"),
        (plain, f"<think>\nI will write\n```python\n{right}```\nand check it"),
        (plain, f"<think>\nok\n```cpp\n{right_cpp}```\n</think>\nThe code above is my answer."),
        (plain, f"```python\n{right}```\nOn second thought:\n```python\n{wrong}```"),
        (plain, f"```cpp\n{right_cpp}```\nA Python version:\n```python\n{wrong}```"),
        (plain, "```python\n```"),
        (plain, ""),
        (plain, "print('<|im_end|>')"),
        (plain, f"```python\nprint('{end}')\n```"),
        (plain, f"<|begin_of_thought|>\n```python\n{right}```\n<|end_of_thought|>\n<|begin_of_solution|>\n"
                "Use the program from my thoughts.\n<|end_of_solution|>"),
        (plain, f"<|channel|>analysis<|message|>```python\n{right}```<|end|><|start|>assistant<|channel|>final"
                "<|message|>Done."),
    ]
    rows = []
    for i, (prompt, response) in enumerate(responses):
        for nl in ("\n", "\r\n"):
            rows.append((prompt + _lines(response, nl) + end + pad * PADS[i % 3], prompt, "demo/isqrt", 0.0))
    return rows


def _post_reward(url: str, rows: list[tuple[str, str, str, float]], with_prompts: bool) -> list[float]:
    body: dict[str, Any] = {"query": [q for q, *_ in rows], "labels": [lab for _, _, lab, _ in rows]}
    if with_prompts:
        body["prompts"] = [p for _, p, _, _ in rows]
    response = requests.post(url, json=body, timeout=1800)
    assert response.status_code == 200, response.content[:2000]
    return list(response.json()["rewards"])


@pytest.mark.heavy(seconds=43)
def test_openrlhf_remote_reward_protocol(live_server, token, url_tokens, baseline, demo):
    url = f"{live_server.url}/api/v1/openrlhf/t/{token}/reward"
    prompts = {pid: answer_prompt(p) for pid, p in demo.items()}
    sent = 0
    failures = []
    for index, (family, nl, rows) in enumerate(_lines_of_openrlhf(prompts)):
        for with_prompts in (True, False) if FULL else (index % 2 == 0,):
            got = _post_reward(url, rows, with_prompts)
            sent += len(rows)
            failures += [(family, repr(nl), with_prompts, q[-300:], r, g)
                         for (q, _, _, r), g in zip(rows, got, strict=True) if r != g]
    tricks = _policy_tricks(prompts)
    for with_prompts in (True, False):
        got = _post_reward(url, tricks, with_prompts)
        sent += len(tricks)
        failures += [("trick", with_prompts, q[-300:], r, g) for (q, _, _, r), g in zip(tricks, got, strict=True)
                     if r != g]
    print(f"openrlhf: {sent} completions, {len(failures)} wrong rewards")
    for failure in failures:
        print("WRONG", failure[:3], repr(failure[-3][-160:]), failure[-2:])
    assert not failures, failures[:5]


@pytest.mark.heavy(seconds=24)
def test_openrlhf_reward_func_file(live_server, token, baseline, demo, monkeypatch):
    """OpenRLHF 0.11 loads the file by path and calls reward_func([query], [prompt], [label])."""
    import importlib.util

    monkeypatch.setenv("HARDTESTS_URL", live_server.url)
    monkeypatch.setenv("HARDTESTS_TOKEN", token)
    spec = importlib.util.spec_from_file_location("reward_func", REPO / "hardtests_client" / "openrlhf_reward_func.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    prompts = {pid: answer_prompt(p) for pid, p in demo.items()}
    rows = [row for i, (_, _, batch) in enumerate(_lines_of_openrlhf(prompts)) if i % 2 == 0 for row in batch]
    rows += _policy_tricks(prompts)[::2]
    failures = []
    for i, (query, prompt, label, reward) in enumerate(rows):
        # As SingleTurnAgentExecutor calls it: one sample per call.
        got = float(module.reward_func([query], [prompt] if i % 3 else None, [label])["rewards"][0])
        if got != reward:
            failures.append((query[-300:], reward, got))
    print(f"reward_func: {len(rows)} completions, {len(failures)} wrong rewards")
    assert not failures, failures[:5]


@pytest.mark.heavy(seconds=20)
def test_sandboxfusion_submit_and_run_code(live_server, token, url_tokens, baseline, demo):
    from sandbox_fusion import RunCodeRequest, RunStatus, SubmitRequest, TestConfig, run_code, submit

    endpoint = f"{live_server.url}/sandboxfusion/t/{token}"
    failures = []
    sent = 0
    counter = itertools.count()
    for family, (_, end, pad) in FAMILIES.items():
        for nl in LINE_ENDS:
            for name in LIGHT[next(counter) % 4::4] if FULL else LIGHT[next(counter) % 8::8]:
                problem, language, code, reward = PROGRAMS[name]
                i = next(counter)
                label = LABELS[language][i % len(LABELS[language])]
                completion = _lines(_shape(i, code, label, end + pad * PADS[i % 3]), nl)
                config = TestConfig(language={"python3": "python", "cpp": "cpp"}[language]) if i % 4 == 0 \
                    else TestConfig()
                result = submit(SubmitRequest(dataset="hardtests", id=problem, completion=completion, config=config),
                                endpoint=endpoint, max_attempts=1, client_timeout=900)
                sent += 1
                if float(result.accepted) != reward:
                    failures.append((family, repr(nl), name, completion[-300:], result.extracted_type))
    for query, prompt, problem, _ in _policy_tricks({"demo/isqrt": answer_prompt(demo["demo/isqrt"])}):
        result = submit(SubmitRequest(dataset="hardtests", id=problem, completion=query[len(prompt):],
                                      config=TestConfig()), endpoint=endpoint, max_attempts=1, client_timeout=900)
        sent += 1
        if result.accepted:
            failures.append(("trick", query[len(prompt):][-300:]))
    # /run_code: the correct programs themselves, on the first sample, as the client sends them.
    for name, (problem, language, code, reward) in PROGRAMS.items():
        if reward != 1.0:
            continue  # a wrong program may well pass the sample
        sample = demo[problem].samples[0]
        for nl in ("\n", "\r\n"):
            out = run_code(RunCodeRequest(code=_lines(code, nl), language="python" if language == "python3"
                                          else language, stdin=sample["input"], run_timeout=10),
                           endpoint=endpoint, max_attempts=1, client_timeout=900)
            sent += 1
            if out.status != RunStatus.Success or out.run_result.stdout.split() != sample["output"].split():
                failures.append(("run_code", name, repr(nl), out.status, out.message))
    print(f"sandboxfusion: {sent} requests, {len(failures)} wrong answers")
    assert not failures, failures[:5]


class _Config(dict):
    @property
    def reward(self) -> _Config:
        return self


def _reward_loop_call(fn: Callable[..., Any], row: dict[str, Any], completion: str) -> float:
    """verl 0.9.1's reward loop (experimental/reward_loop/reward_manager/naive.py run_single):
    a coroutine function is awaited, a plain one runs in the loop's executor, by keyword."""
    kwargs = {"data_source": row["data_source"], "solution_str": completion,
              "ground_truth": row["reward_model"]["ground_truth"],
              "extra_info": {**row["extra_info"], "num_turns": None, "rollout_reward_scores": {}}}

    async def run_single() -> Any:
        if asyncio.iscoroutinefunction(fn) or asyncio.iscoroutinefunction(getattr(fn, "func", None)):
            return await fn(**kwargs)
        return await asyncio.get_running_loop().run_in_executor(None, lambda: fn(**kwargs))

    result = asyncio.run(run_single())
    return float(result["score"] if isinstance(result, dict) else result)


def _verl_completions() -> list[tuple[str, str, float]]:
    """(problem, completion, reward) as verl decodes them (skip_special_tokens=True: no end
    tokens), in every shape, line end and label."""
    rows = []
    pairs = list(itertools.product(LIGHT, LINE_ENDS)) if FULL else [(name, LINE_ENDS[i % 3]) for i, name in
                                                                      enumerate(LIGHT)]
    for i, (name, nl) in enumerate(pairs):
        problem, language, code, reward = PROGRAMS[name]
        label = LABELS[language][i % len(LABELS[language])]
        rows.append((problem, _lines(_shape(i, code, label, ""), nl), reward))
    right, wrong = PROGRAMS["isqrt_py"][2], PROGRAMS["isqrt_py_off"][2]
    rows += [("demo/isqrt", f"<think>\n```python\n{right}```\n</think>\n```python\n{wrong}```", 0.0),
             ("demo/isqrt", f"```python\n{right}```\nFixed:\n```python\n{wrong}```", 0.0),
             ("demo/isqrt", "```python\n```", 0.0), ("demo/isqrt", "", 0.0),
             ("demo/grid-paths", f"```java\n{PROGRAMS['grid_java'][2]}```", 1.0)]
    return rows


# What verl's built-in extraction cannot read (its own code, not the server's): a ```python draft
# before a final block labelled otherwise, and a fence indented inside a list item.
BUILTIN_BLIND = re.compile(r"```python[\s\S]*```(?!python)\w|Fixed:|<think>|^ +```", re.M)


def _exports(tmp_path: Path, demo: dict[str, Problem]) -> dict[str, dict[str, dict[str, Any]]]:
    from problems.exporters.verl import verl_export, verl_sandbox_fusion_export

    problems = Problem.objects.filter(pk__in=[p.pk for p in demo.values()])
    verl_export(problems=problems, out=tmp_path / "ours")
    verl_sandbox_fusion_export(problems=problems, out=tmp_path / "builtin")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for flavour in ("ours", "builtin"):
        for row in pq.read_table(tmp_path / flavour / "train.parquet").to_pylist():
            out.setdefault(flavour, {})[row["extra_info"]["problem"].split(":", 1)[-1]] = row
    assert set(out["builtin"]) == set(out["ours"]) == set(demo)
    return out


@pytest.mark.heavy(seconds=45)
def test_verl_builtin_and_ours_under_the_reward_loop(live_server, token, url_tokens, baseline, demo, tmp_path,
                                                     verl_loader):
    from verl.utils.reward_score import default_compute_score

    rows = _exports(tmp_path, demo)
    # verl's load_reward_manager with reward.sandbox_fusion.url set and no custom function: a
    # partial over default_compute_score with a Manager semaphore; memory_limit_mb as configured
    # (None when the config has the key without a value).
    manager = multiprocessing.Manager()
    builtin = partial(default_compute_score, sandbox_fusion_url=f"{live_server.url}/sandboxfusion/t/{token}/run_code",
                      concurrent_semaphore=manager.Semaphore(64), memory_limit_mb=None)
    ours = {name: verl_loader(_Config(custom_reward_function={
        "path": path, "name": name, "reward_kwargs": {"base_url": live_server.url, "token": token}}))
        for name, path in (("compute_score", str(REPO / "hardtests_client" / "verl.py")),
                           ("compute_score_async", "pkg://hardtests_client.verl"))}
    batch = verl_loader(_Config(custom_reward_function={
        "path": str(REPO / "hardtests_client" / "verl.py"), "name": "compute_score_batch",
        "reward_kwargs": {"base_url": live_server.url, "token": token}}))
    completions = _verl_completions()
    failures = []
    builtin_scores: list[tuple[float, float]] = []
    sent = 0
    for index, (problem, completion, reward) in enumerate(completions):
        for flavour in ("ours", "builtin"):
            row = rows[flavour][problem]
            for number, (name, fn) in enumerate(ours.items()):
                if not FULL and (index + number) % 2:
                    continue  # by default each completion goes through one of the two functions
                sent += 1
                if _reward_loop_call(fn, row, completion) != reward:
                    failures.append((name, flavour, completion[-200:], reward))
        if BUILTIN_BLIND.search(completion):
            continue  # verl's built-in takes the last ```python block wherever it is (docs/rl-clients.md)
        sent += 1
        got = _reward_loop_call(builtin, rows["builtin"][problem], completion)
        builtin_scores.append((reward, got))
        # The built-in is continuous (the pass rate of the first 10 tests): a wrong program earns < 1.
        if (got == 1.0) != (reward == 1.0):
            failures.append(("builtin", completion[-200:], reward, got))
    scores = batch(data_sources=["x"] * len(completions), solution_strs=[c for _, c, _ in completions],
                   ground_truths=[rows["ours"][p]["reward_model"]["ground_truth"] for p, _, _ in completions],
                   extra_infos=[rows["ours"][p]["extra_info"] for p, _, _ in completions])
    sent += len(completions)
    failures += [("batch", c[-200:], r, s) for (_, c, r), s in zip(completions, scores, strict=True) if s != r]
    print(f"verl: {sent} scores, {len(failures)} wrong; built-in on wrong programs:",
          sorted(got for reward, got in builtin_scores if reward == 0.0))
    assert not failures, failures[:5]
    assert json.loads(rows["builtin"]["demo/isqrt"]["reward_model"]["ground_truth"])["inputs"]


@pytest.mark.django_db(transaction=False)
def test_every_line_extracts_its_program_without_a_server():
    """The full cross (every program, shape, label, family, padding, line end, with and without
    prompts) through the extractor alone, what the live tests above send a rotating share of."""
    from hardtests_client.extract import extract_code, response_of
    from problems.demo import demo_load

    demo_load()
    prompts = {pid: answer_prompt(Problem.objects.get(pid=pid)) for pid in {p for p, *_ in PROGRAMS.values()}}
    wrong = []
    count = 0
    for (name, (problem, language, code, _)), (family, (template, end, pad)), nl in itertools.product(
            PROGRAMS.items(), FAMILIES.items(), LINE_ENDS):
        prompt = template.format(p=prompts[problem])
        for shape, label, pads in itertools.product(range(9), LABELS[language], PADS):
            response = _lines(_shape(shape, code, label, end + pad * pads), nl)
            if prompt.endswith("<think>\n"):
                response = f"Reasoning.\n</think>\n\n{response}"
            for query, given in ((prompt + response, prompt), (prompt + response, None),
                                 (pad * 3 + prompt + response, prompt), ((prompt + response)[200:], prompt)):
                count += 1
                found = extract_code(response_of(query, given), default_language="python3")
                if (found.code, found.language) != (code, language):
                    wrong.append((name, family, repr(nl), shape, label, given is None, found.kind))
    right = {v[2] for v in PROGRAMS.values() if v[3] == 1.0}
    for query, prompt, _, _ in _policy_tricks(prompts):
        for given in (prompt, None):
            count += 1
            if extract_code(response_of(query, given), default_language="python3").code in right:
                wrong.append(("trick", query[-200:]))
    print(f"extracted: {count} lines, {len(wrong)} wrong")
    assert count > 40_000 and not wrong, wrong[:10]
