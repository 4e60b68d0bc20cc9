"""Reads that the pages share, by page: search, the problems list, one problem, the home page; the
verdict matrix lives in problems.matrix. Everything is re-exported here, so callers import from
`problems.selectors`."""

from problems.matrix import (  # noqa: F401 - re-exported for the pages
    MATRIX_FILTERS,
    VERDICT_STYLE,
    CellDetail,
    Matrix,
    MatrixColumn,
    gold_expectation,
    matrix_pending,
    verdict_cell,
    verdict_matrix,
    verdict_style,
)
from problems.selectors.common import *  # noqa: F403
from problems.selectors.common import _generated_suites  # noqa: F401
from problems.selectors.home import *  # noqa: F403
from problems.selectors.listing import *  # noqa: F403
from problems.selectors.problem import *  # noqa: F403
from problems.selectors.search import *  # noqa: F403
from problems.selectors.search import _sqlite_fts_ready  # noqa: F401
