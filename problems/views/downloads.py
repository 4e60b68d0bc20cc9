"""Downloads of test data, read from content-addressed storage (pages only show previews)."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator

from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from problems.blobs import blob_get, blob_pairs
from problems.models import Problem, TestCase, TestSuite


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "problem"


def test_download(request: HttpRequest, pk: int, test_id: int, part: str) -> HttpResponse:
    if part not in ("input", "output"):
        raise Http404
    test = get_object_or_404(TestCase.objects.select_related("suite__problem"), pk=test_id, suite__problem_id=pk)
    body = blob_get(test.input_sha256 if part == "input" else test.output_sha256)
    name = f"{_slug(test.suite.problem.pid)}-v{test.suite.version}-{test.ordinal:04d}.{'in' if part == 'input' else 'out'}"
    response = HttpResponse(body, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


class _ZipSink:
    """A write-only, tell-able file for zipfile; the view drains it between entries, so the
    archive streams out one test at a time and never sits whole in memory."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.position = 0

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass  # never called (zipfile leaves a file it was given open); zipfile's type asks for it

    def drain(self) -> Iterator[bytes]:
        chunks, self.chunks = self.chunks, []
        yield from chunks


# (ordinal, kind, generator, call_number, input_sha256, output_sha256, output_origin)
_TestRow = tuple[int, str, str, int | None, str, str, str]


def _suite_zip(suite: TestSuite, rows: list[_TestRow]) -> Iterator[bytes]:
    sink = _ZipSink()
    manifest = []
    bodies = blob_pairs(row[4:6] for row in rows)
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for (ordinal, kind, generator, call_number, in_sha, out_sha, made_by), (inp, out) in zip(rows, bodies,
                                                                                                 strict=True):
            stem = f"tests/{ordinal:04d}"
            archive.writestr(f"{stem}.in", inp)
            # A time-only test has no expected output: an empty .out would make any judge reading
            # the archive fail right programs on it and pass silent ones.
            expected = kind != TestCase.Kind.TIME_ONLY
            if expected:
                archive.writestr(f"{stem}.out", out)
            manifest.append({"ordinal": ordinal, "kind": kind, "generator": generator, "call_number": call_number,
                             "input_sha256": in_sha, "output_sha256": out_sha if expected else None,
                             "expected_output": expected, **({"output_origin": made_by} if made_by else {})})
            yield from sink.drain()
        archive.writestr("manifest.json", json.dumps({
            "problem": suite.problem.pid, "source": suite.problem.source, "suite_version": suite.version,
            "origin": suite.origin, "status": suite.status, "unverified": suite.unverified,
            "trust": suite.trust or None, "tests": manifest,
        }, indent=1))
    yield from sink.drain()


def suite_download(request: HttpRequest, pk: int, suite_id: int) -> StreamingHttpResponse:
    problem = get_object_or_404(Problem.objects.only("id", "pid", "source"), pk=pk)
    suite = get_object_or_404(TestSuite.objects.filter(problem=problem), pk=suite_id)
    suite.problem = problem
    rows = list(suite.tests.order_by("ordinal").values_list(
        "ordinal", "kind", "generator", "call_number", "input_sha256", "output_sha256", "output_origin"
    ))
    response = StreamingHttpResponse(_suite_zip(suite, rows), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{_slug(problem.pid)}-suite-v{suite.version}.zip"'
    return response
