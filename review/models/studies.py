"""Human validation studies: people label validators (correct?) and suites (complete?).

A Study names its problems by a filter or a list; opening it freezes them into StudyItems,
each pinned to the validator and suite versions that existed then, so every annotator
labels the same thing even if a pipeline run replaces them mid-study. An Annotation is one
annotator's claim on one item and, once submitted, their labels; the per-item overlap cap
is enforced with a conditional update of StudyItem.claims (see review/studies/assignment.py).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.joblife import kind_register
from problems.models import InputValidator, Problem, QueuedJobRecord, TestSuite, queued_job_kind

__all__ = [
    "Adjudication",
    "Annotation",
    "Study",
    "StudyItem",
    "SuiteAddition",
    "SuiteLabel",
    "ValidatorLabel",
    "ValidatorReason",
    "ValidatorTrial",
]


class ValidatorLabel(models.TextChoices):
    CORRECT = "correct", "Correct"
    INCORRECT = "incorrect", "Incorrect"
    UNSURE = "unsure", "Unsure"


class ValidatorReason(models.TextChoices):
    MISSING_CONSTRAINT = "missing_constraint", "Missing constraint"
    WRONG_BOUND = "wrong_bound", "Wrong bound"
    TOO_STRICT_FORMAT = "too_strict_format", "Too strict on whitespace or format"
    MISSES_GUARANTEE = "misses_guarantee", "Misses a guarantee of the statement"
    OTHER = "other", "Other"


class SuiteLabel(models.TextChoices):
    COMPLETE = "complete", "Complete"
    INCOMPLETE = "incomplete", "Incomplete"


class Study(models.Model):
    class Questions(models.TextChoices):
        VALIDATOR = "validator", "Validator correctness"
        SUITE = "suite", "Suite completeness"
        BOTH = "both", "Both"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    class Selection(models.TextChoices):
        FILTER = "filter", "By filter"
        LIST = "list", "Explicit list"

    name = models.CharField(max_length=200)
    guidelines = models.TextField(blank=True, help_text="Markdown, shown beside every item")
    questions = models.CharField(max_length=10, choices=Questions.choices, default=Questions.BOTH)
    selection = models.CharField(max_length=10, choices=Selection.choices, default=Selection.FILTER)
    # {"source", "platform", "tag", "difficulty", "search", "limit"}: all optional, ANDed.
    problem_filter = models.JSONField(default=dict, blank=True)
    problems = models.ManyToManyField(Problem, blank=True, related_name="+", help_text="the explicit list")
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="studies")
    overlap = models.PositiveSmallIntegerField(default=2, help_text="how many annotators label each item")
    seed = models.PositiveIntegerField(default=0, help_text="fixes the item order")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT, db_index=True)
    # A maintainer may show results to annotators before closing.
    results_opened = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [models.CheckConstraint(condition=Q(overlap__gte=1), name="study_overlap_positive")]

    def __str__(self) -> str:
        return self.name

    @property
    def asks_validator(self) -> bool:
        return self.questions in (self.Questions.VALIDATOR, self.Questions.BOTH)

    @property
    def asks_suite(self) -> bool:
        return self.questions in (self.Questions.SUITE, self.Questions.BOTH)


class StudyItem(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="study_items")
    # Position in the seeded order; annotators are offered items in this order.
    position = models.PositiveIntegerField()
    validator = models.ForeignKey(InputValidator, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    suite = models.ForeignKey(TestSuite, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Live claims plus submitted labels; never above the study's overlap (conditional update).
    claims = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "problem"], name="study_item_unique_problem"),
            models.UniqueConstraint(fields=["study", "position"], name="study_item_unique_position"),
        ]

    def __str__(self) -> str:
        return f"item {self.position} of study {self.study_id} ({self.problem_id})"


class Annotation(models.Model):
    """One annotator on one item: a claim while labelling, then their labels."""

    class Status(models.TextChoices):
        CLAIMED = "claimed", "In progress"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"

    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.CLAIMED, db_index=True)
    validator_label = models.CharField(max_length=10, choices=ValidatorLabel.choices, blank=True)
    validator_reason = models.CharField(max_length=20, choices=ValidatorReason.choices, blank=True)
    counterexample = models.TextField(blank=True)
    # What the validator said about the counterexample when the annotator checked it (None: not checked).
    counterexample_accepted = models.BooleanField(null=True, blank=True)
    suite_label = models.CharField(max_length=10, choices=SuiteLabel.choices, blank=True)
    missing_cases = models.TextField(blank=True)
    suggested_input = models.TextField(blank=True)
    comment = models.TextField(blank=True)
    time_spent_ms = models.PositiveBigIntegerField(default=0)
    claimed_at = models.DateTimeField(auto_now_add=True)
    last_viewed_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["item", "annotator"]
        constraints = [models.UniqueConstraint(fields=["item", "annotator"], name="annotation_unique_per_annotator")]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.item} ({self.status})"

    @property
    def time_spent_s(self) -> float:
        return self.time_spent_ms / 1000


class Adjudication(models.Model):
    """A maintainer's final label for an item; the individual annotations stay as they were."""

    item = models.OneToOneField(StudyItem, on_delete=models.CASCADE, related_name="adjudication")
    validator_label = models.CharField(max_length=10, choices=ValidatorLabel.choices, blank=True)
    validator_reason = models.CharField(max_length=20, choices=ValidatorReason.choices, blank=True)
    counterexample = models.TextField(blank=True)
    suite_label = models.CharField(max_length=10, choices=SuiteLabel.choices, blank=True)
    note = models.TextField(blank=True)
    # True once the counterexample was added to the validator's regression inputs.
    regression_recorded = models.BooleanField(default=False)
    adjudicated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    adjudicated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"adjudication of {self.item}"


class ValidatorTrial(QueuedJobRecord):
    """The validator run on one typed input (try-it box, counterexample check), in the sandbox."""

    class Purpose(models.TextChoices):
        TRY = "try", "Try it"
        COUNTEREXAMPLE = "counterexample", "Counterexample check"

    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="trials")
    validator = models.ForeignKey(InputValidator, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    purpose = models.CharField(max_length=15, choices=Purpose.choices, default=Purpose.TRY)
    input = models.TextField()
    accepted = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"trial {self.pk} of {self.validator} ({self.status})"


class SuiteAddition(QueuedJobRecord):
    """A suggested missing input on its way into a new suite version: validate, agree, copy."""

    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="suite_additions")
    annotation = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    input = models.TextField()
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    base_suite = models.ForeignKey(TestSuite, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    new_suite = models.ForeignKey(TestSuite, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    output_preview = models.CharField(max_length=200, blank=True)
    log = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"suite addition {self.pk} for {self.item} ({self.status})"


VALIDATOR_TRIAL = kind_register(queued_job_kind("validator_trial", ValidatorTrial))
SUITE_ADDITION = kind_register(queued_job_kind("suite_addition", SuiteAddition))
