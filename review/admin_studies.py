"""Admin pages for human validation studies (review/models/studies.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from review.models import Adjudication, Annotation, Study, StudyItem, SuiteAddition, ValidatorTrial

# ModelAdmin and TabularInline are generic only in django-stubs (subscripting them at run time
# needs their monkeypatch, a dev-only package)
if TYPE_CHECKING:
    _StudyItemInlineBase = admin.TabularInline[StudyItem, Study]
    _StudyAdminBase = admin.ModelAdmin[Study]
    _StudyItemAdminBase = admin.ModelAdmin[StudyItem]
    _AnnotationAdminBase = admin.ModelAdmin[Annotation]
    _AdjudicationAdminBase = admin.ModelAdmin[Adjudication]
    _ValidatorTrialAdminBase = admin.ModelAdmin[ValidatorTrial]
    _SuiteAdditionAdminBase = admin.ModelAdmin[SuiteAddition]
else:
    _StudyItemInlineBase = admin.TabularInline
    _StudyAdminBase = _StudyItemAdminBase = _AnnotationAdminBase = admin.ModelAdmin
    _AdjudicationAdminBase = _ValidatorTrialAdminBase = _SuiteAdditionAdminBase = admin.ModelAdmin


class StudyItemInline(_StudyItemInlineBase):
    model = StudyItem
    extra = 0
    fields = ("position", "problem", "validator", "suite", "claims")
    raw_id_fields = ("problem", "validator", "suite")
    show_change_link = True


@admin.register(Study)
class StudyAdmin(_StudyAdminBase):
    list_display = ("name", "status", "questions", "overlap", "results_opened", "created_at")
    list_filter = ("status", "questions")
    search_fields = ("name",)
    filter_horizontal = ("annotators",)
    raw_id_fields = ("problems", "created_by")
    inlines = [StudyItemInline]


@admin.register(StudyItem)
class StudyItemAdmin(_StudyItemAdminBase):
    list_display = ("__str__", "study", "problem", "claims")
    list_filter = ("study",)
    raw_id_fields = ("study", "problem", "validator", "suite")


@admin.register(Annotation)
class AnnotationAdmin(_AnnotationAdminBase):
    list_display = ("item", "annotator", "status", "validator_label", "suite_label", "time_spent_ms", "submitted_at")
    list_filter = ("status", "validator_label", "suite_label", "item__study")
    raw_id_fields = ("item", "annotator")


@admin.register(Adjudication)
class AdjudicationAdmin(_AdjudicationAdminBase):
    list_display = ("item", "validator_label", "suite_label", "regression_recorded", "adjudicated_by", "adjudicated_at")
    raw_id_fields = ("item", "adjudicated_by")


@admin.register(ValidatorTrial)
class ValidatorTrialAdmin(_ValidatorTrialAdminBase):
    list_display = ("pk", "item", "purpose", "status", "accepted", "created_at")
    list_filter = ("status", "purpose")
    raw_id_fields = ("item", "validator", "user")


@admin.register(SuiteAddition)
class SuiteAdditionAdmin(_SuiteAdditionAdminBase):
    list_display = ("pk", "item", "status", "new_suite", "created_at")
    list_filter = ("status",)
    raw_id_fields = ("item", "annotation", "requested_by", "base_suite", "new_suite")
