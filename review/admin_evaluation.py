"""Admin for the machine evaluation (owned with review/evaluation/)."""

from __future__ import annotations

from django.contrib import admin

from review.models import EvaluationReport


@admin.register(EvaluationReport)
class EvaluationReportAdmin(admin.ModelAdmin):
    list_display = ("id", "status", "created_by", "created_at", "finished_at", "judging_done", "judging_total")
    list_filter = ("status",)
    readonly_fields = ("created_at", "finished_at", "job_id", "report")
    search_fields = ("error",)
