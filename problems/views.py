from __future__ import annotations

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from problems.models import Problem, TestCase, TestSuite


def home(request: HttpRequest) -> HttpResponse:
    context = {
        "totals": {
            "problems": Problem.objects.count(),
            "suites": TestSuite.objects.filter(status=TestSuite.Status.ACTIVE).count(),
            "tests": TestCase.objects.count(),
        },
        "problems": Problem.objects.annotate(n_solutions=Count("solutions")).order_by("pid")[:50],
    }
    return render(request, "problems/home.html", context)


def problem_list(request: HttpRequest) -> HttpResponse:
    problems = Problem.objects.order_by("pid")[:100]
    return render(request, "problems/problem_list.html", {"problems": problems})


def problem_detail(request: HttpRequest, pk: int) -> HttpResponse:
    problem = get_object_or_404(Problem, pk=pk)
    return render(request, "problems/problem_detail.html", {"problem": problem})
