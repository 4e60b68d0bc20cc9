"""Refinement of a generated suite: generator repair, and the feedback loop against known solutions.

- `repair`: generators that crash, time out, return nothing or only invalid inputs go back to
  the LLM with the evidence (Klear-CodeTest), before materialising.
- `feedback`: after materialising, the tuning candidates (gold AC and gold non-AC) are judged
  and the misjudged ones go back to the LLM until TPR and TNR reach their thresholds
  (CodeContests-O); the best round's suite becomes active.
- `split`: which candidates refinement may look at (tuning) and which it may not (held-out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generation.models import GenerationRun


def _pct(value: object) -> str:
    return "n/a" if not isinstance(value, (int, float)) else f"{value:.0%}"


def round_rows(run: GenerationRun) -> list[dict[str, object]]:
    """The run page's view of its refinement rounds (scores as percentages, tokens summed)."""
    rows = []
    for r in run.rounds.select_related("suite", "kit"):
        tuning = r.scores.get("tuning") or {}
        held = r.scores.get("held_out") or {}
        rows.append({
            "round": r, "tuning": tuning, "held": held,
            "tuning_text": f"TPR {_pct(tuning.get('tpr'))} · TNR {_pct(tuning.get('tnr'))}" if tuning else "",
            "held_text": (f"TPR {_pct(held.get('tpr'))} · TNR {_pct(held.get('tnr'))}" if held
                          else "none held out"),
            "tokens": r.prompt_tokens + r.completion_tokens,
        })
    return rows
