"""The problem page of an imported package says where the problem came from (the package's
name, format version and groups), and its Kit tab shows the package's own judges: kind,
language and source, highlighted by Pygments and escaped."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from problems.models import PackageJudge, Problem

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(db: None) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user(username="reader"))
    return client


def _import(*paths: Path) -> None:
    call_command("import_dataset", "icpc", *[str(p) for p in paths], stdout=io.StringIO())


def test_the_problem_page_names_the_package_and_its_groups(kattis_dir: Path, reader: Client) -> None:
    _import(kattis_dir / "oddecho")
    problem = Problem.objects.get(source="icpc", pid="oddecho")
    html = reader.get(f"/problems/{problem.pk}/").content.decode()
    origin = html.split('id="package-origin"', 1)[1].split("</p>", 1)[0]
    assert "the ICPC/Kattis package" in origin and '<span class="chip mono">oddecho</span>' in origin
    groups = [part.split("</span>", 1)[0] for part in origin.split('<span class="chip mono package-group">')[1:]]
    assert groups == ["sample", "secret", "secret/subtask1", "secret/subtask2"]


def test_the_kit_tab_shows_the_package_judges_highlighted(kattis_dir: Path, reader: Client) -> None:
    _import(kattis_dir / "different")
    problem = Problem.objects.get(source="icpc", pid="different")
    assert PackageJudge.objects.filter(problem=problem, kind="kattis_output_validator", language="cpp").exists()
    html = reader.get(f"/problems/{problem.pk}/kit/").content.decode()
    section = html.split('id="package-judges"', 1)[1]
    assert "Kattis output validator" in section and "Kattis input validator" in section
    assert 'data-language="cpp">C++</span>' in section and 'data-language="python3">Python 3</span>' in section
    assert "output_validators/different_validator" in section and "input_validators/validate.py" in section
    # validate.cc's `#include "validate.h"`, through Pygments' C++ lexer (preprocessor token), escaped
    assert '<span class="cp">#include</span>' in section
    assert '<span class="cpf">"validate.h"</span>' in section
    # escaped, never the raw text: `in >> a` of validate.cc, `#include <cassert>` of validate.h
    assert "&gt;&gt;" in section and "in >> a" not in section
    assert '<span class="cpf">&lt;cassert&gt;</span>' in section and "<cassert>" not in section
    # the Python input validator's code, through the Python lexer
    assert '<span class="kn">import</span>' in section


def test_a_testlib_checker_is_shown_without_its_testlib_copy(reader: Client) -> None:
    problem = Problem.objects.create(source="polygon", pid="sum", title="Sum", statement="a+b",
                                     extra={"package": {"format": "polygon", "short_name": "sum",
                                                        "groups": {"samples": {}, "main": {}}}})
    header = "#define TESTLIB_COPY_MARKER\n" * 50
    PackageJudge.objects.create(problem=problem, kind="testlib_checker", name="files/check.cpp", language="cpp",
                                entry="check.cpp", digest="d1",
                                files={"check.cpp": '#include "testlib.h"\nint main() { quitf(_ok, "<b>ok</b>"); }\n',
                                       "testlib.h": header})
    PackageJudge.objects.create(problem=problem, kind="kattis_default", name="default output validator",
                                flags=["float_tolerance", "1e-6"], digest="d2")
    page = reader.get(f"/problems/{problem.pk}/").content.decode()
    assert "the Polygon package" in page and '<span class="chip mono package-group">main</span>' in page
    section = reader.get(f"/problems/{problem.pk}/kit/").content.decode().split('id="package-judges"', 1)[1]
    assert "testlib checker" in section and "Kattis default output validator" in section
    assert "<code>float_tolerance 1e-6</code>" in section
    assert '<span class="s">&quot;&lt;b&gt;ok&lt;/b&gt;&quot;</span>' in section or "&lt;b&gt;ok&lt;/b&gt;" in section
    assert "<b>ok</b>" not in section
    assert "TESTLIB_COPY_MARKER" not in section and "the package's copy of testlib (1400 characters" in section
