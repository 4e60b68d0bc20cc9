"""The published `sandbox-fusion` client and verl's `sandbox_fusion` reward, unchanged, against a
live server with real RQ workers and the real sandbox."""

from __future__ import annotations

import pytest
import requests

from tests.ecosystem.conftest import ACCEPTED, CPP_BROKEN, SLOW, WRONG, fenced

sandbox_fusion = pytest.importorskip("sandbox_fusion")
from sandbox_fusion import (  # noqa: E402
    RunCodeRequest,
    RunStatus,
    SubmitRequest,
    TestConfig,
    run_code,
    submit,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def endpoint(live_server, token, url_tokens) -> str:
    return f"{live_server.url}/sandboxfusion/t/{token}"


def _run(endpoint: str, code: str, language: str = "python", stdin: str = "1 2\n", **extra) -> object:
    return run_code(RunCodeRequest(code=code, language=language, stdin=stdin, **extra), endpoint=endpoint,
                    max_attempts=1)


def test_run_code_answers_in_sandboxfusion_shapes(endpoint, sandbox_worker):
    ok = _run(endpoint, ACCEPTED)
    assert ok.status == RunStatus.Success and ok.run_result.stdout == "3\n" and ok.run_result.return_code == 0
    crash = _run(endpoint, "import sys\nsys.exit(3)\n")
    assert (crash.status, crash.run_result.status, crash.run_result.return_code) == (RunStatus.Failed, "Finished", 3)
    slow = _run(endpoint, SLOW, run_timeout=1)
    assert slow.status == RunStatus.Failed and slow.run_result.status == "TimeLimitExceeded"
    assert slow.run_result.execution_time > 0 and slow.run_result.return_code is None
    broken = _run(endpoint, CPP_BROKEN, language="cpp")
    assert broken.status == RunStatus.Failed and broken.run_result is None
    assert broken.compile_result.return_code != 0 and "error" in broken.compile_result.stderr
    cpp = _run(endpoint, "#include <cstdio>\nint main(){int a,b;scanf(\"%d%d\",&a,&b);printf(\"%d\\n\",a*b);}\n",
               language="cpp", stdin="6 7")
    assert cpp.status == RunStatus.Success and cpp.run_result.stdout == "42\n"


def test_submit_extracts_the_code_and_judges_it(endpoint, ab_problem, sandbox_worker):
    def judged(completion: str, **config):
        return submit(SubmitRequest(dataset="hardtests", id="ab/sum", completion=completion,
                                    config=TestConfig(**config)), endpoint=endpoint, max_attempts=1)

    good = judged(fenced(ACCEPTED))
    assert good.accepted is True and good.extracted_code == ACCEPTED and good.extracted_type == "fenced"
    assert [t.passed for t in good.tests] == [True] * 4 and good.extra["total"] == 4
    # A fence label the model chose (py) maps to Python; with config.language the python block is
    # picked even when a C++ block comes after it.
    assert judged(fenced(ACCEPTED, "py")).accepted is True
    assert judged(fenced(ACCEPTED) + fenced(CPP_BROKEN, "cpp"), language="python").accepted is True

    wrong = judged(fenced(WRONG))
    assert wrong.accepted is False and wrong.tests[-1].passed is False
    assert wrong.tests[-1].exec_info.status == RunStatus.Success  # it ran; its answer was wrong
    assert wrong.extra["verdict"] == "WA"

    slow = judged(fenced(SLOW))
    assert slow.accepted is False and slow.extra["verdict"] == "TLE"
    assert slow.tests[-1].exec_info.run_result.status == "TimeLimitExceeded"

    broken = judged(fenced(CPP_BROKEN, "c++"))
    assert broken.accepted is False and broken.extra["verdict"] == "CE" and broken.extra["language"] == "cpp"
    assert broken.tests[0].exec_info.compile_result.return_code == 1

    empty = judged("I do not know.\n\n```python\n```\n")
    assert empty.accepted is False and empty.extracted_type == "empty" and empty.tests == []


def test_submit_with_every_end_token_and_line_end(endpoint, ab_problem, sandbox_worker):
    from tests.ecosystem.test_extract import END_TOKENS

    for name, end in END_TOKENS.items():
        for code, accepted in ((ACCEPTED, True), (WRONG, False)):
            completion = f"Sure.\r\n```Python\r\n{code.replace(chr(10), chr(13) + chr(10))}```{end}"
            out = submit(SubmitRequest(dataset="hardtests", id="ab/sum", completion=completion, config=TestConfig()),
                         endpoint=endpoint, max_attempts=1)
            assert (out.accepted, out.extracted_code, out.extracted_type) == (accepted, code, "fenced"), name
    thinking = submit(SubmitRequest(dataset="hardtests", id="ab/sum", completion=f"<think>\n```python\n{ACCEPTED}```", config=TestConfig()),
                      endpoint=endpoint, max_attempts=1)
    assert thinking.accepted is False and thinking.extracted_type == "empty" and thinking.tests == []
    assert "<think>" in thinking.extra["reason"]


def test_run_code_outputs_are_capped_in_bytes_and_never_grow(endpoint, sandbox_worker):
    import base64

    # 8 MB of 0xFF: not UTF-8, so base64 (4/3), never 6 bytes of JSON per byte.
    flood = "import sys\nsys.stdout.buffer.write(b'\\xff' * (8 * 1024 * 1024))\n"
    response = requests.post(f"{endpoint}/run_code", timeout=300,
                             json={"code": flood, "language": "python", "run_timeout": 10})
    assert response.status_code == 200
    assert len(response.content) < 12 * 1024 * 1024
    run = response.json()["run_result"]
    assert run["stdout_encoding"] == "base64" and base64.b64decode(run["stdout"])[:4] == b"\xff" * 4
    # Control characters are valid UTF-8 but cost 6 bytes each as JSON escapes.
    control = "import sys\nsys.stdout.write(chr(1) * (4 * 1024 * 1024))\n"
    response = requests.post(f"{endpoint}/run_code", timeout=300, json={"code": control, "language": "python"})
    assert len(response.content) < 8 * 1024 * 1024 and response.json()["run_result"]["stdout_encoding"] == "base64"
    text = _run(endpoint, "print('h\u00e9llo')\n")
    assert text.run_result.stdout == "h\u00e9llo\n"


def test_run_code_takes_verl_defaults(endpoint, sandbox_worker):
    # verl sends memory_limit_MB null and language python for every program, C++ too.
    cpp = "#include <cstdio>\nint main(){int a,b;scanf(\"%d%d\",&a,&b);printf(\"%d\\n\",a+b);}\n"
    for code in (cpp, "c++\n" + cpp, ACCEPTED):
        response = requests.post(f"{endpoint}/run_code", timeout=120, json={
            "code": code, "stdin": "1 2\n", "language": "python", "memory_limit_MB": None, "run_timeout": 5})
        assert response.status_code == 200, response.content
        assert response.json()["run_result"]["stdout"] == "3\n", response.json()


def test_verl_sandbox_fusion_reward_scores_programs(endpoint, sandbox_worker, verl_sandbox_fusion):
    cases = {"inputs": ["1 2\n", "5 7\n", "1000000000 1000000000\n"], "outputs": ["3\n", "12\n", "2000000000\n"]}
    url = f"{endpoint}/run_code"

    def score(completion: str) -> tuple[float, list]:
        return verl_sandbox_fusion.compute_score(url, None, 256, completion, cases)

    assert score(fenced(ACCEPTED))[0] == 1.0
    wrong, meta = score(fenced(WRONG))
    assert wrong == 0.0 and {m["status"] for m in meta} == {"wrong_answer"}
    broken, meta = score(fenced("def main(:\n    pass\n"))
    assert broken == 0.0 and meta[0]["status"] == "compile_error"
    capped = "a, b = map(int, input().split())\nprint(min(a + b, 10**9))\n"
    assert score(fenced(capped))[0] == pytest.approx(2 / 3)
    # One test: verl gives each request compile + run timeout + 10 s, and one worker runs
    # the TLE programs one after another.
    one = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    slow, meta = verl_sandbox_fusion.compute_score(url, None, 256, fenced(SLOW), one, timeout=1)
    assert slow == 0.0 and [m["status"] for m in meta] == ["timeout"]


def test_header_less_clients_are_refused_by_default(live_server, token, ab_problem):
    # URL tokens off (the default): the token in the path does not open the door.
    response = requests.post(f"{live_server.url}/sandboxfusion/t/{token}/run_code",
                             json={"code": "print(1)", "language": "python"}, timeout=30)
    assert response.status_code == 401
    with pytest.raises(Exception, match="401"):
        run_code(RunCodeRequest(code="print(1)", language="python"), endpoint=f"{live_server.url}/sandboxfusion",
                 max_attempts=1)
    # A bearer header always works; a language SandboxFusion has but we do not is a 400.
    response = requests.post(f"{live_server.url}/sandboxfusion/run_code", timeout=30,
                             headers={"Authorization": f"Bearer {token}"},
                             json={"code": "console.log(1)", "language": "nodejs"})
    assert response.status_code == 400 and response.json()["errors"][0]["loc"][-1] == "language"


def test_trusted_network_needs_no_token(live_server, settings, sandbox_worker):
    settings.HARDTESTS_API_TRUSTED_NETWORKS = ["127.0.0.0/8"]
    out = _run(f"{live_server.url}/sandboxfusion", "print(input()[::-1])\n", stdin="abc")
    assert out.run_result.stdout == "cba\n"
    settings.HARDTESTS_API_TRUSTED_NETWORKS = ["10.0.0.0/8"]
    response = requests.post(f"{live_server.url}/sandboxfusion/run_code",
                             json={"code": "print(1)", "language": "python"}, timeout=30)
    assert response.status_code == 401
