"""Admin pages for human validation studies (review/models/studies.py)."""

from __future__ import annotations

from django.contrib import admin

from review.models import Adjudication, Annotation, Study, StudyItem, SuiteAddition, ValidatorTrial


class StudyItemInline(admin.TabularInline):
    model = StudyItem
    extra = 0
    fields = ("position", "problem", "validator", "suite", "claims")
    raw_id_fields = ("problem", "validator", "suite")
    show_change_link = True


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "questions", "overlap", "results_opened", "created_at")
    list_filter = ("status", "questions")
    search_fields = ("name",)
    filter_horizontal = ("annotators",)
    raw_id_fields = ("problems", "created_by")
    inlines = [StudyItemInline]


@admin.register(StudyItem)
class StudyItemAdmin(admin.ModelAdmin):
    list_display = ("__str__", "study", "problem", "claims")
    list_filter = ("study",)
    raw_id_fields = ("study", "problem", "validator", "suite")


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("item", "annotator", "status", "validator_label", "suite_label", "time_spent_ms", "submitted_at")
    list_filter = ("status", "validator_label", "suite_label", "item__study")
    raw_id_fields = ("item", "annotator")


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ("item", "validator_label", "suite_label", "regression_recorded", "adjudicated_by", "adjudicated_at")
    raw_id_fields = ("item", "adjudicated_by")


@admin.register(ValidatorTrial)
class ValidatorTrialAdmin(admin.ModelAdmin):
    list_display = ("pk", "item", "purpose", "status", "accepted", "created_at")
    list_filter = ("status", "purpose")
    raw_id_fields = ("item", "validator", "user")


@admin.register(SuiteAddition)
class SuiteAdditionAdmin(admin.ModelAdmin):
    list_display = ("pk", "item", "status", "new_suite", "created_at")
    list_filter = ("status",)
    raw_id_fields = ("item", "annotation", "requested_by", "base_suite", "new_suite")
