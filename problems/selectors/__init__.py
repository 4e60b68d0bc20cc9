"""Reads that the pages share, by page: search, the problems list, one problem, the home page; the
verdict matrix lives in problems.matrix. Everything is re-exported here, so callers import from
`problems.selectors`."""

# re-exported for the pages (`as`: an explicit re-export, for mypy)
from problems.matrix import MATRIX_FILTERS as MATRIX_FILTERS
from problems.matrix import VERDICT_STYLE as VERDICT_STYLE
from problems.matrix import CellDetail as CellDetail
from problems.matrix import Matrix as Matrix
from problems.matrix import MatrixColumn as MatrixColumn
from problems.matrix import gold_expectation as gold_expectation
from problems.matrix import matrix_pending as matrix_pending
from problems.matrix import verdict_cell as verdict_cell
from problems.matrix import verdict_matrix as verdict_matrix
from problems.matrix import verdict_style as verdict_style
from problems.selectors.common import *  # noqa: F403
from problems.selectors.common import _generated_suites  # noqa: F401
from problems.selectors.home import *  # noqa: F403
from problems.selectors.listing import *  # noqa: F403
from problems.selectors.problem import *  # noqa: F403
from problems.selectors.search import *  # noqa: F403
from problems.selectors.search import _sqlite_fts_ready  # noqa: F401
