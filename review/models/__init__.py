"""Review models: human validation studies (studies.py) and machine evaluation (evaluation.py)."""

from review.models.evaluation import *  # noqa: F401,F403
from review.models.studies import *  # noqa: F401,F403
