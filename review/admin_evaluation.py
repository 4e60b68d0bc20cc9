"""Admin for the machine evaluation (owned with review/evaluation/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from review.models import EvaluationReport

# ModelAdmin is generic only in django-stubs (subscripting it at run time needs their
# monkeypatch, a dev-only package)
if TYPE_CHECKING:
    _EvaluationReportAdminBase = admin.ModelAdmin[EvaluationReport]
else:
    _EvaluationReportAdminBase = admin.ModelAdmin


@admin.register(EvaluationReport)
class EvaluationReportAdmin(_EvaluationReportAdminBase):
    list_display = ("id", "status", "created_by", "created_at", "finished_at", "judging_done", "judging_total")
    list_filter = ("status",)
    readonly_fields = ("created_at", "finished_at", "job_id", "report")
    search_fields = ("error",)
