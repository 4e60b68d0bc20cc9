"""Pages of the catalogue. One module per screen; templates/problems/ holds pages and _partials."""

from problems.views.downloads import suite_download, test_download
from problems.views.lists import demo_build, problem_list
from problems.views.matrix import problem_judge_all, problem_matrix, verdict_cell_detail, verdict_output
from problems.views.problem import (
    problem_detail,
    problem_kit,
    problem_solutions_tab,
    problem_suite,
    solution_code,
    suite_compare,
)

__all__ = [
    "problem_list", "problem_detail", "problem_suite", "suite_compare", "problem_kit",
    "problem_solutions_tab", "solution_code", "problem_matrix", "problem_judge_all", "test_download",
    "suite_download", "verdict_cell_detail", "verdict_output", "demo_build",
]
