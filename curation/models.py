"""Curation jobs: many sampled completions per problem, verified against the suites, then
selected by a rule (the verification-limits paper's rejection sampling) and exported.

A completion's per-test outcomes are stored compactly, so that any rule (a pass fraction
threshold, all tests of a subset, an LLM judge's score, or a combination) is evaluated from
the database without running anything again.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.joblife import JobKind, kind_register
from generation.models import LLMCall
from problems.models import Problem, TestSuite

__all__ = ["CURATION_JOB", "Completion", "CurationJob", "JudgeScore", "Selection"]


class CurationJob(models.Model):
    class Status(models.TextChoices):
        IMPORTED = "imported", "Imported"
        VERIFYING = "verifying", "Verifying"
        VERIFIED = "verified", "Verified"
        FAILED = "failed", "Failed"

    name = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.IMPORTED, db_index=True)
    # Which active suite judges each completion: one origin, or "" for the problem's preferred
    # active suite (generated, official, imported, public); extra origins are judged too so
    # that an "all tests of a suite origin" rule can be applied.
    suite_origin = models.CharField(max_length=12, blank=True)
    extra_origins = models.JSONField(default=list, blank=True)
    # The suites pinned at import, {problem id: {origin: suite id}}: a suite activated while the
    # job runs does not mix two suites' pass fractions in one dataset.
    suites = models.JSONField(default=dict, blank=True)
    source_name = models.CharField(max_length=300, blank=True, help_text="the imported file's name")
    # Marks the demo's data (our own programs wrapped as completions), so pages and exports say so.
    demo = models.BooleanField(default=False)
    total = models.PositiveIntegerField(default=0)
    # Worker time spent verifying (an F() update per chunk); progress, tests run and CPU time are
    # counted from the completions themselves, so a crash or a resume never double counts them.
    wall_ms = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Each chunk beats when it claims and when it writes: a verifying job silent longer than
    # HARDTESTS_CURATION_STALE_S has lost every chain (curation.lifecycle.curation_jobs_sweep).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"curation job #{self.pk} {self.name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.VERIFIED, self.Status.FAILED)


def _stale_after_s() -> float:
    return float(settings.HARDTESTS_CURATION_STALE_S)


# Many chains of chunk jobs share one job, so it has no RQ job or worker of its own: its beat says
# whether any chain lives, and a dead job is taken back and queued again, never failed (a resume).
CURATION_JOB = kind_register(JobKind(
    name="curation_job", model=CurationJob, queued=CurationJob.Status.IMPORTED,
    running=(CurationJob.Status.VERIFYING,), done=CurationJob.Status.VERIFIED, failed=CurationJob.Status.FAILED,
    cancelled=CurationJob.Status.FAILED, worker_field=None, job_id_field=None, stale_after_s=_stale_after_s,
    on_dead="requeue", sweep="curation.lifecycle.curation_jobs_sweep",
))


class Completion(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Verified"
        ERROR = "error", "Sandbox or internal error"

    job = models.ForeignKey(CurationJob, on_delete=models.CASCADE, related_name="completions")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="+")
    model_name = models.CharField(max_length=200, blank=True)
    sample_index = models.PositiveIntegerField(default=0)
    language = models.CharField(max_length=10, blank=True)
    # The model's whole answer (prose, reasoning, fences) when one was given; the code is what
    # the shared extractor took from it (or the row's code as given).
    completion = models.TextField(blank=True)
    code = models.TextField(blank=True)
    extract_kind = models.CharField(max_length=20, blank=True)
    # "correct" / "incorrect" when the row carried a gold label, else "".
    gold = models.CharField(max_length=10, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING, db_index=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # The claiming chunk's token: a chunk claims its rows in one statement and writes back only
    # rows that still carry its token (a stale claim taken back and re-claimed is not overwritten).
    claim = models.CharField(max_length=32, blank=True)
    suite = models.ForeignKey(TestSuite, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    verdict = models.CharField(max_length=4, blank=True)
    passed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    pass_fraction = models.FloatField(null=True, blank=True, db_index=True)
    # {origin: {"suite": id, "verdict": "WA", "passed": 3, "total": 5,
    #           "tests": [[ordinal, kind, verdict], ...]}} for the primary and the extra origins.
    results = models.JSONField(default=dict, blank=True)
    tests_run = models.PositiveIntegerField(default=0)
    cpu_ms = models.PositiveIntegerField(default=0)
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["job", "id"]
        constraints = [
            models.UniqueConstraint(fields=["job", "problem", "model_name", "sample_index"],
                                    name="curation_one_completion_per_sample"),
        ]
        indexes = [models.Index(fields=["job", "status"], name="curation_completion_queue_idx")]

    def __str__(self) -> str:
        return f"completion {self.model_name}#{self.sample_index} of {self.problem_id}"


class JudgeScore(models.Model):
    """An LLM judge's score for one completion; the call it came from is kept for audit."""

    completion = models.ForeignKey(Completion, on_delete=models.CASCADE, related_name="judge_scores")
    judge = models.CharField(max_length=200, help_text="the judging model")
    prompt_version = models.CharField(max_length=50)
    # 0-10, as the prompt asks; null when the reply could not be read (the error says why).
    score = models.FloatField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    error = models.TextField(blank=True)
    llm_call = models.ForeignKey(LLMCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["completion", "judge", "prompt_version"], name="curation_one_score_per_judge"),
        ]

    def __str__(self) -> str:
        return f"{self.judge} scored completion {self.completion_id}: {self.score}"


class Selection(models.Model):
    """One rule applied to a verified job: what was kept, and where the export was written."""

    job = models.ForeignKey(CurationJob, on_delete=models.CASCADE, related_name="selections")
    rule = models.JSONField(help_text="the rule as given (see curation.rules)")
    label = models.CharField(max_length=300)
    kept = models.PositiveIntegerField(default=0)
    considered = models.PositiveIntegerField(default=0)
    kept_ids = models.JSONField(default=list, blank=True)
    export_path = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "id"]

    def __str__(self) -> str:
        return f"{self.label} on job {self.job_id}"
