"""The docs' walkthroughs, followed literally: the commands and code of each page run as written
(only the steps that need a real LLM are left out, and the page marks them), against the test
database, Redis and a real sandbox.

- docs/your-dataset.md: the JSON line imported, a suite built from its kit, a program judged,
  the suites exported;
- docs/rl-loop.md: a token made in the shell, rewards for a group of samples from a live server
  with a sandbox worker;
- docs/human-study.md: the export columns it lists are the export's own, and a seed gives one
  order;
- docs/two-machines.md: machine A's variables, loaded as the page says, answer a request to the
  machine's address and name (not 400).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import sandbox_worker  # noqa: F401  (a fixture)
from tests.conftest import REPO, worker_env

DOCS = REPO / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)  # fences start a line (code may hold ``` inside)


def blocks(page: str) -> list[tuple[str, str, str]]:
    """(language, code, the prose since the previous block) of each fenced block, in order."""
    text = (DOCS / page).read_text()
    out, last = [], 0
    for match in FENCE.finditer(text):
        out.append((match.group(1), match.group(2), text[last:match.start()]))
        last = match.end()
    return out


def needs_llm(prose: str) -> bool:
    return "needs your LLM" in " ".join(prose.strip().split("\n\n")[-1].split())


def run_line(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A documented shell line: `python manage.py ...` with this interpreter on the test services."""
    env = {**worker_env(), "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    if line.startswith("python manage.py "):
        args = [sys.executable, str(REPO / "manage.py"), *shlex.split(line)[2:]]
        return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


# The tests the dataset walkthrough's generate_tests materialised for mine:sum-two (plain data,
# for the file's later tests): the rl-loop walkthrough, whose subject is the rewards, builds its
# suite from them instead of generating it again (and generates it when run alone).
GENERATED: list[Any] = []


def dataset_line() -> str:
    [line] = [code for lang, code, _ in blocks("your-dataset.md") if lang == "json"]
    return line


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_dataset_walkthrough_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "problems.jsonl").write_text(dataset_line())
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    for lang, code, prose in blocks("your-dataset.md"):
        if lang != "bash" or needs_llm(prose):
            continue
        for line in code.strip().splitlines():
            if line.startswith("export "):  # the LLM endpoint's variables: only the LLM steps read them
                continue
            proc = run_line(line, tmp_path)
            assert proc.returncode == 0, (line, proc.stdout[-2000:], proc.stderr[-2000:])
            ran[line.split()[2] if line.startswith("python manage.py") else line.split()[0]] = proc
    assert set(ran) >= {"import_dataset", "generate_tests", "judge", "export_dataset", "printf"}
    assert json.loads(ran["import_dataset"].stdout)["created"] == 1
    generated = json.loads(ran["generate_tests"].stdout)
    assert generated["status"] == "succeeded" and generated["suite_version"] == 1, generated
    assert generated["counts"]["total"]["kept"] > 3
    judged = json.loads(ran["judge"].stdout)
    assert judged["verdict"] == "AC" and judged["passed"] == judged["total"] > 3
    assert list((tmp_path / "exported").rglob("*.parquet"))
    from problems.blobs import blob_get
    from problems.models import TestSuite
    from problems.services import NewTest

    suite = TestSuite.objects.get(problem__source="mine", problem__pid="sum-two", status=TestSuite.Status.ACTIVE)
    GENERATED[:] = [NewTest(input=blob_get(t.input_sha256), output=blob_get(t.output_sha256), kind=t.kind)
                    for t in suite.tests.order_by("ordinal")]


def test_the_dataset_example_has_the_oracles_generation_needs() -> None:
    from django.conf import settings

    row = json.loads(dataset_line())
    oracles = [s for s in row["solutions"] if s["role"] == "oracle"]
    assert len(oracles) >= settings.HARDTESTS_MIN_ORACLES == 2
    text = (DOCS / "your-dataset.md").read_text()
    assert "HARDTESTS_MIN_ORACLES" in text  # the minimum is stated, and how to set it


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_rl_loop_walkthrough_gives_rewards_from_a_live_server(live_server: Any, sandbox_worker: Any,  # noqa: F811
                                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from django.core.management import call_command

    from tests.factories import maintainer

    maintainer("maintainer")
    (tmp_path / "problems.jsonl").write_text(dataset_line())
    call_command("import_dataset", "native", str(tmp_path / "problems.jsonl"), stdout=StringIO())
    if GENERATED:
        from problems.models import Problem, TestSuite
        from problems.services import suite_activate, suite_add_tests, suite_create

        problem = Problem.objects.get(source="mine", pid="sum-two")
        kit = problem.kits.order_by("-version").first()
        assert kit is not None
        suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED, kit=kit, validator=kit.validator,
                             output_judge=kit.output_judge)
        suite_add_tests(suite=suite, tests=GENERATED)
        suite_activate(suite=suite)
    else:
        call_command("generate_tests", "mine:sum-two", "--sync", "--from-kit", stdout=StringIO())
    [shell] = [code for lang, code, _ in blocks("rl-loop.md") if lang == "bash"]
    proc = run_line(shell + 'echo "$HARDTESTS_URL"; echo "$HARDTESTS_TOKEN"', REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    url, token = proc.stdout.split()[-2:]
    assert url == "http://127.0.0.1:8000" and token.startswith("htk_")
    monkeypatch.setenv("HARDTESTS_URL", live_server.url)  # the page's server is `make run`'s; here the test's
    monkeypatch.setenv("HARDTESTS_TOKEN", token)
    [code] = [code for lang, code, _ in blocks("rl-loop.md") if lang == "python"]
    ast.parse(code)
    exec(compile(code, "docs/rl-loop.md", "exec"), {})  # noqa: S102 - the page's own code, as a reader runs it
    assert capsys.readouterr().out.strip() == "[1.0, 0.0, 0.0]"


@pytest.mark.django_db
def test_the_human_study_page_lists_the_exports_columns_and_a_seed_fixes_the_order() -> None:
    from review.studies.results import EXPORT_FIELDS
    from tests.factories import annotator
    from tests.review.test_studies_support import ensure_roles, make_problem, make_study

    text = (DOCS / "human-study.md").read_text()
    table = text[text.index("## 6. Export the labels"):]
    assert re.findall(r"^\| `(\w+)` \|", table, re.M) == EXPORT_FIELDS
    ensure_roles()
    people = [annotator("ann1"), annotator("ann2")]
    problems = [make_problem(title=f"Problem {i}") for i in range(6)]

    def order(seed: int, name: str) -> list[int]:
        study = make_study(problems=problems, annotators=people, seed=seed, name=name)
        return list(study.items.order_by("position").values_list("problem_id", flat=True))

    assert order(11, "a") == order(11, "b") != order(12, "c")


def test_machine_a_of_the_two_machines_page_answers_its_address_and_name(tmp_path: Path) -> None:
    env_blocks = [code for lang, code, _ in blocks("two-machines.md") if lang == "bash"]
    shared, machine_a = env_blocks[0], env_blocks[1]
    documented = dict(line.split("=", 1) for block in (shared, machine_a) for line in block.strip().splitlines())
    assert documented["HARDTESTS_DEMO"] == "0" and documented["SECRET_KEY"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARDTESTS_", "DATABASE_", "REDIS_", "AWS_"))}
    env.update(documented)
    env.update(HARDTESTS_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="hardtests_web.settings")
    env.pop("DEBUG", None)
    probe = (
        "import django; django.setup()\n"
        "from django.conf import settings; from django.test import Client\n"
        "c = Client()\n"
        "print(settings.DEBUG, settings.HARDTESTS_DEMO, settings.SESSION_COOKIE_SECURE)\n"
        "for host in ('10.0.0.5:8000', 'hardtests.lan', 'elsewhere.example'):\n"
        "    print(c.get('/healthz', HTTP_HOST=host).status_code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.split("\n")
    assert lines[0] == "False False False"  # production mode, cookies over the LAN's plain HTTP
    assert lines[1:4] == ["200", "200", "400"]
