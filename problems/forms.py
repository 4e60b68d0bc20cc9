"""Forms of the web pages: the problems filter (GET), kit edits, judging and regeneration (POST)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from core.forms import choice_field
from problems.list_extensions import list_extensions
from problems.selectors import SORT_LABELS

SUITE_STATUS_CHOICES = [("", "Any suite"), ("active", "Active suite"), ("failed", "Failed, none active"),
                        ("none", "No suite")]
SEARCH_MAX_CHARS = 200
JUDGE_CHOICES = [("", "Any checker"), ("yes", "Has a judging function"), ("no", "Exact-match output")]


class ProblemFilterForm(forms.Form):
    """The list's filter state; every field is optional and lives in the URL."""

    q = forms.CharField(required=False, label="Search")
    platform = forms.ChoiceField(required=False)
    difficulty = forms.ChoiceField(required=False)
    tag = forms.ChoiceField(required=False)
    suite = forms.ChoiceField(required=False, choices=SUITE_STATUS_CHOICES, label="Suite")
    judge = forms.ChoiceField(required=False, choices=JUDGE_CHOICES, label="Checker")
    # No separate empty choice: the default order is by id, shown as "Sort: Id" (one entry, not two).
    sort = forms.ChoiceField(required=False, choices=[(k, f"Sort: {v}") for k, v in SORT_LABELS.items()])
    page = forms.IntegerField(required=False, min_value=1)
    per_page = forms.ChoiceField(required=False, label="Per page", choices=[
        ("", "50 per page"), ("25", "25 per page"), ("100", "100 per page"), ("200", "200 per page")])

    # Choice filters whose value, when unknown (an old link, a typo), still filters (to nothing)
    # and is named on the page, instead of being dropped and showing every problem.
    NAMED_WHEN_UNKNOWN = ("platform", "difficulty", "tag")

    def __init__(self, *args: Any, facets: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "platform").choices = (
            [("", "Any platform")] + [(p, p) for p in facets["platforms"]])
        difficulty: list[Any] = [("", "Any difficulty")]
        for source, levels in facets["difficulty"].items():
            difficulty.append((source, [(f"{source}:", f"{source}: any")] + [(f"{source}:{lv}", f"{source}: {lv}")
                                                                            for lv in levels]))
        choice_field(self, "difficulty").choices = difficulty
        choice_field(self, "tag").choices = [("", "Any tag")] + [(t, t) for t in facets["tags"]]
        # Filters of apps above problems (review status), placed before the sort selector.
        for extension in list_extensions():
            self.fields[extension.name] = forms.ChoiceField(required=False, choices=extension.choices,
                                                            label=extension.label)
        self.order_fields([name for name in self.fields if name not in ("sort", "page", "per_page")]
                          + ["sort", "page", "per_page"])

    def clean_q(self) -> str:
        q = self.cleaned_data.get("q") or ""
        if len(q) > SEARCH_MAX_CHARS:
            raise forms.ValidationError(
                f"The search is {len(q):,} characters long; at most {SEARCH_MAX_CHARS} are searched. "
                "Shorten it (a few words or an id is enough).")
        return q

    def filters(self) -> dict[str, Any]:
        """The cleaned filter state. An unknown platform, difficulty or tag still filters (it
        matches nothing) and is listed in `unknown`; other invalid values are ignored."""
        if self.is_valid():
            return {k: v for k, v in self.cleaned_data.items() if v not in (None, "")}
        kept = {k: self.cleaned_data[k] for k in getattr(self, "cleaned_data", {}) if self.cleaned_data[k]}
        for name in self.NAMED_WHEN_UNKNOWN:
            raw = self.data.get(name) if self.is_bound else None
            if name in self.errors and raw:
                kept[name] = str(raw)[:200]
        return kept

    def unknown(self) -> list[tuple[str, str]]:
        """(field label, value) of the choice filters whose value names nothing in the catalogue."""
        if not self.is_bound or self.is_valid():
            return []
        return [(str(self.fields[name].label or name).lower(), str(self.data.get(name))[:200])
                for name in self.NAMED_WHEN_UNKNOWN if name in self.errors and self.data.get(name)]


class KitEditForm(forms.Form):
    validator_code = forms.CharField(widget=forms.Textarea(attrs={"rows": 18, "class": "code-input",
                                                                  "spellcheck": "false"}),
                                     label="Input validator (validate_input)", max_length=200_000, strip=False)
    judge_code = forms.CharField(widget=forms.Textarea(attrs={"rows": 12, "class": "code-input", "spellcheck": "false"}),
                                 required=False, max_length=200_000, strip=False,
                                 label="Output judging function (empty: exact match)")
    note = forms.CharField(required=False, max_length=500, label="What changed and why")
    kit_version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    # Browsers submit textareas with CRLF line ends; code is stored with LF so an unchanged
    # field compares equal to the stored version and does not make a new one.
    def clean_validator_code(self) -> str:
        code: str = self.cleaned_data["validator_code"].replace("\r\n", "\n")
        if not code.strip():
            raise forms.ValidationError("The validator cannot be empty.")
        return code

    def clean_judge_code(self) -> str:
        code: str = self.cleaned_data["judge_code"].replace("\r\n", "\n")
        return code


class JudgeAllForm(forms.Form):
    suite = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class RegenerateForm(forms.Form):
    mode = forms.ChoiceField(widget=forms.RadioSelect, choices=[])
    model_name = forms.ChoiceField(required=False, label="Model")
    confirm = forms.BooleanField(required=True, label="Yes, start a new generation run")

    def __init__(self, *args: Any, llm_ready: bool, has_kit: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        modes = []
        if llm_ready:
            modes.append(("from_scratch", "From scratch: the LLM writes a new validator, judge and generators"))
        if has_kit:
            modes.append(("from_kit", "From the current kit: re-run its generators and oracles, no LLM"))
        if llm_ready:
            # No human oracle needed; the suite is marked oracle_free (docs/oracle-free.md).
            modes.append(("oracle_free", "Oracle-free (HardTests A.7): an LLM brute force, cross-checked, gives the "
                                         "outputs of small edge inputs, plus one max-size time-only test"))
            modes.append(("acecoder", "AceCoder baseline (oracle-free): 20 model-written input/output pairs "
                                      "filtered by a model-written solution"))
        choice_field(self, "mode").choices = modes
        choice_field(self, "model_name").choices = [(m, m) for m in settings.HARDTESTS_LLM_MODELS]
        if modes:
            self.fields["mode"].initial = modes[0][0]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if data.get("mode") in ("from_scratch", "oracle_free", "acecoder") and not data.get("model_name"):
            self.add_error("model_name", "Choose a model.")
        return data
