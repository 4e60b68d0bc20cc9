"""Refinement of a generated suite: generator repair, and the feedback loop against known solutions.

- `repair`: generators that crash, time out, return nothing or only invalid inputs go back to
  the LLM with the evidence (Klear-CodeTest), before materialising.
- `feedback`: after materialising, the tuning candidates (gold AC and gold non-AC) are judged
  and the misjudged ones go back to the LLM until TPR and TNR reach their thresholds
  (CodeContests-O); the best round's suite becomes active.
- `split`: which candidates refinement may look at (tuning) and which it may not (held-out).
"""
