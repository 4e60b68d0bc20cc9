"""Admin for review. Each part keeps its own module so two owners never edit the same lines."""

import review.admin_evaluation  # noqa: F401
from review import admin_studies  # noqa: F401
