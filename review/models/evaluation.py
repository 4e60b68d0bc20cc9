"""Machine evaluation of suites: a stored report of suites measured as classifiers.

The report JSON is computed once (by `manage.py evaluate` or a `default`-queue job) and
stored here, so the evaluation page only reads the database.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.joblife import JobKind, kind_register

__all__ = ["EVALUATION_REPORT", "EvaluationReport"]


class EvaluationReport(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        JUDGING = "judging", "Judging candidates"
        COMPUTING = "computing", "Computing metrics"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    # What was asked for: {"pids": [...], "filter": "...", "origins": [...]}.
    params = models.JSONField(default=dict, blank=True)
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Judging progress while status is JUDGING, so the page can show it from the database.
    judging_total = models.PositiveIntegerField(default=0)
    judging_done = models.PositiveIntegerField(default=0)
    # Computing progress while status is COMPUTING: sections done of all, and the one under way.
    compute_total = models.PositiveIntegerField(default=0)
    compute_done = models.PositiveIntegerField(default=0)
    compute_step = models.CharField(max_length=100, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    job_id = models.CharField(max_length=64, blank=True)
    # Claimed by (core.joblife.claim); the running job beats with its progress (shown, not
    # judged: a section of the metrics may take minutes; the sweep reads its RQ job instead).
    worker = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"evaluation #{self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def percent(self) -> int:
        """Overall progress: judging is the first 80%, computing the metrics the rest."""
        if self.status == self.Status.DONE:
            return 100
        if self.status == self.Status.JUDGING:
            return round(80 * self.judging_done / self.judging_total) if self.judging_total else 0
        if self.status == self.Status.COMPUTING:
            return 80 + (round(20 * self.compute_done / self.compute_total) if self.compute_total else 0)
        return 0


# No beat of its own is judged: a section of the metrics may take minutes, so the sweep reads its
# RQ job (the page's own check, job_lost in review/evaluation/views.py, says the same).
EVALUATION_REPORT = kind_register(JobKind(
    name="evaluation_report", model=EvaluationReport, queued=EvaluationReport.Status.QUEUED,
    running=(EvaluationReport.Status.JUDGING, EvaluationReport.Status.COMPUTING), done=EvaluationReport.Status.DONE,
    failed=EvaluationReport.Status.FAILED, cancelled=EvaluationReport.Status.FAILED,
))
