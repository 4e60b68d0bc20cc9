"""Forms of the study pages. Validation lives here; writes go through services."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib.auth import get_user_model

from core.forms import choice_field
from core.permissions import ANNOTATORS
from problems.models import Problem
from problems.selectors import problem_facets
from review.models import Study, SuiteLabel, ValidatorLabel, ValidatorReason

if TYPE_CHECKING:
    from django.contrib.auth.models import User

FILTER_KEYS = ("source", "platform", "tag", "difficulty", "search", "limit")

# Keyboard shortcuts, one place: the template shows them and static/js/review-annotate.js
# reads them back from data-shortcut attributes, so the page and the keys never drift apart.
VALIDATOR_KEYS = {ValidatorLabel.CORRECT: "1", ValidatorLabel.INCORRECT: "2", ValidatorLabel.UNSURE: "3"}
SUITE_KEYS = {SuiteLabel.COMPLETE: "4", SuiteLabel.INCOMPLETE: "5"}
REASON_KEYS = {
    ValidatorReason.MISSING_CONSTRAINT: "q",
    ValidatorReason.WRONG_BOUND: "w",
    ValidatorReason.TOO_STRICT_FORMAT: "e",
    ValidatorReason.MISSES_GUARANTEE: "r",
    ValidatorReason.OTHER: "t",
}
ACTION_KEYS = {
    "submit": "n", "skip": "s", "try": "i", "counterexample": "x", "check": "k", "comment": "c", "help": "?",
    "missing": "m", "suggest": "g",
}


def choice_pairs(form: forms.BaseForm, name: str) -> list[tuple[Any, Any]]:
    """The (value, label) pairs of one of the form's ChoiceFields, which keeps them as a list."""
    return cast(list[tuple[Any, Any]], choice_field(form, name).choices)


def annotator_choices() -> Any:
    """Only people in the annotators group: a maintainer or an admin who is not an annotator
    never sees the annotation queue, so assigning them items would leave the items unlabelled."""
    User = get_user_model()
    return User.objects.filter(groups__name=ANNOTATORS, is_active=True).distinct().order_by("username")


def _filter_choices() -> dict[str, list[Any]]:
    """What the catalogue holds, for the filter menus (the list page's cached facets plus sources)."""
    facets = problem_facets()
    sources = sorted(s for s in Problem.objects.order_by().values_list("source", flat=True).distinct() if s)
    levels = [(source, [(level, level) for level in found]) for source, found in facets["difficulty"].items()]
    return {
        "source": [("", "Any source"), *((s, s) for s in sources)],
        "platform": [("", "Any platform"), *((p, p) for p in facets["platforms"])],
        "tag": [("", "Any tag"), *((t, t) for t in facets["tags"])],
        "difficulty": [("", "Any difficulty"), *levels],
    }


def _with_current(choices: list[Any], current: Any) -> list[Any]:
    """Keep a stored value that is no longer in the catalogue selectable, so saving does not fail."""
    flat = {str(k) for k, v in choices if not isinstance(v, list)} | {
        str(k) for _, v in choices if isinstance(v, list) for k, _ in v}
    return choices if not current or str(current) in flat else [*choices, (current, current)]


# ModelForm is generic only in django-stubs (subscripting it at run time needs their
# monkeypatch, a dev-only package)
if TYPE_CHECKING:
    _StudyFormBase = forms.ModelForm[Study]
else:
    _StudyFormBase = forms.ModelForm


class StudyForm(_StudyFormBase):
    annotators: forms.ModelMultipleChoiceField[User] = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple  # set in __init__
    )
    filter_source = forms.ChoiceField(required=False, label="Source (dataset)")
    filter_platform = forms.ChoiceField(required=False, label="Platform")
    filter_tag = forms.ChoiceField(required=False, label="Tag")
    filter_difficulty = forms.ChoiceField(required=False, label="Difficulty level")
    filter_search = forms.CharField(required=False, label="Title or id contains")
    filter_limit = forms.IntegerField(required=False, min_value=1, label="At most this many problems")
    problem_list = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        label="Problems (one id or pid per line)",
    )

    class Meta:
        model = Study
        fields = ["name", "guidelines", "questions", "selection", "overlap", "seed"]
        widgets = {
            "guidelines": forms.Textarea(attrs={"rows": 8}),
            "selection": forms.RadioSelect,
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        annotators = self.fields["annotators"]
        assert isinstance(annotators, forms.ModelMultipleChoiceField)
        annotators.queryset = annotator_choices()
        overlap = self.fields["overlap"]
        assert isinstance(overlap, forms.IntegerField)
        overlap.min_value = 1
        self.fields["overlap"].widget.attrs["min"] = 1
        self.fields["overlap"].help_text = "how many annotators label each item; at most the number of annotators chosen"
        stored = (self.instance.problem_filter or {}) if self.instance.pk else {}
        for key, choices in _filter_choices().items():
            choice_field(self, f"filter_{key}").choices = _with_current(
                choices, self.data.get(f"filter_{key}") or stored.get(key)
            )
        self.fields["seed"].required = False
        self.fields["seed"].help_text = "fixes the item order; left empty, a random seed is drawn"
        if not self.instance.pk:
            # The model's default (0) is a seed like any other; a new study starts empty, as the help says.
            self.initial["seed"] = None
        study = self.instance if self.instance.pk else None
        if study is not None:
            self.initial["annotators"] = list(study.annotators.values_list("pk", flat=True))
            for key in FILTER_KEYS:
                self.initial[f"filter_{key}"] = (study.problem_filter or {}).get(key, "")
            self.initial["problem_list"] = "\n".join(study.problems.order_by("pk").values_list("pid", flat=True))
            if study.status != Study.Status.DRAFT:
                for name in ("questions", "selection", "overlap", "seed", "problem_list",
                             *(f"filter_{k}" for k in FILTER_KEYS)):
                    self.fields[name].disabled = True

    def clean_problem_list(self) -> list[Problem]:
        wanted = [line.strip() for line in (self.cleaned_data.get("problem_list") or "").splitlines() if line.strip()]
        found: list[Problem] = []
        missing = []
        for token in wanted:
            problem = Problem.objects.filter(pid=token).first()
            if problem is None and token.isdigit():
                problem = Problem.objects.filter(pk=int(token)).first()
            if problem is None:
                missing.append(token)
            elif problem not in found:
                found.append(problem)
        if missing:
            raise forms.ValidationError(f"unknown problem(s): {', '.join(missing[:10])}")
        return found

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # the base clean() returns cleaned_data
        if data.get("selection") == Study.Selection.LIST and not data.get("problem_list") and not self.fields[
            "problem_list"
        ].disabled:
            self.add_error("problem_list", "name at least one problem, or select by filter")
        overlap = data.get("overlap")
        chosen = len(data.get("annotators") or [])
        if overlap is not None and overlap < 1:
            self.add_error("overlap", "Overlap must be at least 1.")
        elif overlap is not None and chosen and overlap > chosen and not self.fields["overlap"].disabled:
            self.add_error("overlap", f"Overlap {overlap} needs at least {overlap} annotators; "
                                      f"{chosen} {'is' if chosen == 1 else 'are'} chosen.")
        elif overlap is not None and chosen and overlap > chosen:
            self.add_error("annotators", f"The study's overlap is {overlap}: choose at least {overlap} annotators.")
        return data

    def problem_filter(self) -> dict[str, Any]:
        spec = {key: self.cleaned_data.get(f"filter_{key}") for key in FILTER_KEYS}
        return {k: v for k, v in spec.items() if v not in (None, "")}

    def service_fields(self) -> dict[str, Any]:
        data = self.cleaned_data
        fields = {"name": data["name"], "guidelines": data["guidelines"], "annotators": list(data["annotators"])}
        if not self.fields["questions"].disabled:
            seed = data.get("seed")
            if seed is None and self.instance.pk:
                # Call after instance.refresh_from_db(): is_valid() wrote the empty seed onto it.
                seed = self.instance.seed
            fields.update(
                questions=data["questions"], selection=data["selection"], overlap=data["overlap"],
                problem_filter=self.problem_filter(), problems=data.get("problem_list") or [],
                **({} if seed is None else {"seed": seed}),
            )
        return fields


class DraftForm(forms.Form):
    """What autosave keeps: the label form's fields, unchecked (a draft may be half done)."""

    validator_label = forms.ChoiceField(choices=[("", ""), *ValidatorLabel.choices], required=False)
    validator_reason = forms.ChoiceField(choices=[("", ""), *ValidatorReason.choices], required=False)
    counterexample = forms.CharField(required=False, strip=False, max_length=1_000_000)
    suite_label = forms.ChoiceField(choices=[("", ""), *SuiteLabel.choices], required=False)
    missing_cases = forms.CharField(required=False, max_length=20_000)
    suggested_input = forms.CharField(required=False, strip=False, max_length=1_000_000)
    comment = forms.CharField(required=False, max_length=20_000)


class LabelForm(forms.Form):
    validator_label = forms.ChoiceField(choices=ValidatorLabel.choices, required=False)
    validator_reason = forms.ChoiceField(choices=ValidatorReason.choices, required=False)
    counterexample = forms.CharField(required=False, strip=False)
    suite_label = forms.ChoiceField(choices=SuiteLabel.choices, required=False)
    missing_cases = forms.CharField(required=False)
    suggested_input = forms.CharField(required=False, strip=False)
    comment = forms.CharField(required=False)
    elapsed_ms = forms.IntegerField(required=False, min_value=0)

    def __init__(self, *args: Any, study: Study, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # the base clean() returns cleaned_data
        if self.study.asks_validator:
            if not data.get("validator_label"):
                self.add_error("validator_label", "label the validator")
            elif data["validator_label"] == ValidatorLabel.INCORRECT and not data.get("validator_reason"):
                self.add_error("validator_reason", "say why the validator is incorrect")
        else:
            data["validator_label"] = ""
        if self.study.asks_suite:
            if not data.get("suite_label"):
                self.add_error("suite_label", "label the suite")
            elif data["suite_label"] == SuiteLabel.INCOMPLETE and not (data.get("missing_cases") or "").strip():
                self.add_error("missing_cases", "describe the missing cases")
        else:
            data["suite_label"] = ""
        return data


class AdjudicationForm(forms.Form):
    validator_label = forms.ChoiceField(choices=[("", "—"), *ValidatorLabel.choices], required=False)
    validator_reason = forms.ChoiceField(choices=[("", "—"), *ValidatorReason.choices], required=False)
    counterexample = forms.CharField(required=False, strip=False,
                                     widget=forms.Textarea(attrs={"rows": 3, "class": "code-input"}))
    suite_label = forms.ChoiceField(choices=[("", "—"), *SuiteLabel.choices], required=False)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # the base clean() returns cleaned_data
        if data.get("validator_label") == ValidatorLabel.INCORRECT and not data.get("validator_reason"):
            self.add_error("validator_reason", "say why the validator is incorrect")
        if not data.get("validator_label") and not data.get("suite_label"):
            raise forms.ValidationError("set at least one final label")
        return data


class ValidatorEditForm(forms.Form):
    code = forms.CharField(strip=False, widget=forms.Textarea(attrs={"rows": 16, "spellcheck": "false", "class": "code-input"}))
    note = forms.CharField(required=False, max_length=500)


class InputForm(forms.Form):
    input = forms.CharField(
        strip=False, max_length=1_000_000, label="Input",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "code-input"}),
    )
