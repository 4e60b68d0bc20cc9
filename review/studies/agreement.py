"""Agreement and rates for study labels, as the statistics define them.

Labels arrive as {item: {annotator: label}}. Degenerate tables are common in small
studies (everyone chose "correct" for every item): when the expected agreement is 1 the
kappas are 0/0 and Krippendorff's alpha has no disagreement to expect, so they are
reported as undefined (None), never as a number and never as an exception. Perfect
agreement over two or more categories is 1.0.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

# numpy, statsmodels (with pandas and scipy) and krippendorff are imported where they are used:
# importing them here cost every process that loads the URLconf (each web worker, each
# management command's checks) about 1.2 s of CPU, for pages few requests open.

# Items and annotators are any hashable keys; Any, since Mapping is invariant in its key type
# (Mapping[Hashable, ...] would refuse a dict[int, ...]).
Ratings = Mapping[Any, Mapping[Any, str]]


@dataclass(frozen=True)
class Rate:
    successes: int
    total: int
    low: float | None
    high: float | None

    @property
    def value(self) -> float | None:
        return self.successes / self.total if self.total else None

    # Percentages for pages: None stays None so templates can say "no labels".
    @property
    def pct(self) -> float | None:
        return None if self.value is None else 100 * self.value

    @property
    def low_pct(self) -> float | None:
        return None if self.low is None else 100 * self.low

    @property
    def high_pct(self) -> float | None:
        return None if self.high is None else 100 * self.high


@dataclass(frozen=True)
class PairKappa:
    first: Any  # an annotator key of the Ratings
    second: Any
    items: int
    kappa: float | None


@dataclass(frozen=True)
class Agreement:
    categories: tuple[str, ...]
    pairs: list[PairKappa]
    fleiss: float | None
    fleiss_items: int
    alpha: float | None
    alpha_items: int
    observed: float | None  # share of pairable label pairs that agree

    @property
    def any_defined(self) -> bool:
        return self.fleiss is not None or self.alpha is not None or any(p.kappa is not None for p in self.pairs)


def wilson(successes: int, total: int, confidence: float = 0.95) -> Rate:
    """The Wilson score interval, which stays inside [0, 1] and behaves at 0 and n successes."""
    if total <= 0:
        return Rate(successes=0, total=0, low=None, high=None)
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, total, alpha=1 - confidence, method="wilson")
    return Rate(successes=successes, total=total, low=float(low), high=float(high))


def _defined(value: float) -> float | None:
    return None if value is None or math.isnan(value) or math.isinf(value) else float(value)


def _categories(ratings: Ratings, categories: Sequence[str] | None) -> tuple[str, ...]:
    if categories is not None:
        return tuple(categories)
    return tuple(sorted({label for by_annotator in ratings.values() for label in by_annotator.values()}))


def cohen(pairs: Iterable[tuple[str, str]], categories: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters from their (label, label) pairs; None when undefined."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for a, b in pairs:
        table[index[a], index[b]] += 1
    n = table.sum()
    if n == 0:
        return None
    expected = float((table.sum(axis=0) * table.sum(axis=1)).sum() / n**2)
    if math.isclose(expected, 1.0):
        return None  # both raters used one and the same category: (p_o - p_e) / (1 - p_e) = 0/0
    return _defined(cohens_kappa(table).kappa)


def fleiss(ratings: Ratings, categories: Sequence[str]) -> tuple[float | None, int]:
    """Fleiss' kappa over the items rated by the most common number (>= 2) of raters.

    Fleiss' formula assumes every item has the same number of ratings, so items still
    missing labels are left out rather than bent into the table. Returns (kappa, items used).
    """
    import numpy as np
    from statsmodels.stats.inter_rater import fleiss_kappa

    sizes = Counter(len(by) for by in ratings.values() if len(by) >= 2)
    if not sizes:
        return None, 0
    # The largest of the most common sizes, so a finished study uses its full overlap.
    top = max(sizes.values())
    n = max(size for size, count in sizes.items() if count == top)
    index = {c: i for i, c in enumerate(categories)}
    rows = []
    for by in ratings.values():
        if len(by) != n:
            continue
        row = [0] * len(categories)
        for label in by.values():
            row[index[label]] += 1
        rows.append(row)
    table = np.array(rows, dtype=float)
    shares = table.sum(axis=0) / table.sum()
    if math.isclose(float((shares**2).sum()), 1.0):
        return None, len(rows)  # one category only: P_e = 1, kappa is 0/0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _defined(fleiss_kappa(table, method="fleiss")), len(rows)


def alpha(ratings: Ratings, categories: Sequence[str]) -> tuple[float | None, int]:
    """Krippendorff's alpha (nominal), which allows missing ratings. Returns (alpha, pairable items)."""
    import krippendorff
    import numpy as np

    annotators = sorted({a for by in ratings.values() for a in by}, key=str)
    items = [item for item, by in ratings.items() if len(by) >= 2]
    if not items or len(annotators) < 2:
        return None, len(items)
    index = {c: i for i, c in enumerate(categories)}
    data = np.full((len(annotators), len(items)), np.nan)
    for col, item in enumerate(items):
        for row, annotator in enumerate(annotators):
            label = ratings[item].get(annotator)
            if label is not None:
                data[row, col] = index[label]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    except ValueError:
        return None, len(items)  # "more than one value in the domain" is needed
    return _defined(value), len(items)


def observed_agreement(ratings: Ratings) -> float | None:
    agree = total = 0
    for by in ratings.values():
        for a, b in combinations(by.values(), 2):
            total += 1
            agree += a == b
    return agree / total if total else None


def agreement(ratings: Ratings, categories: Sequence[str] | None = None) -> Agreement:
    cats = _categories(ratings, categories)
    annotators = sorted({a for by in ratings.values() for a in by}, key=str)
    pairs = []
    for first, second in combinations(annotators, 2):
        both = [(by[first], by[second]) for by in ratings.values() if first in by and second in by]
        pairs.append(PairKappa(first, second, len(both), cohen(both, cats) if both else None))
    fleiss_value, fleiss_items = fleiss(ratings, cats) if cats else (None, 0)
    alpha_value, alpha_items = alpha(ratings, cats) if cats else (None, 0)
    return Agreement(
        categories=cats,
        pairs=pairs,
        fleiss=fleiss_value,
        fleiss_items=fleiss_items,
        alpha=alpha_value,
        alpha_items=alpha_items,
        observed=observed_agreement(ratings),
    )


def majority(labels: Iterable[str]) -> str | None:
    """The label most annotators chose, or None on a tie (left for adjudication)."""
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]
