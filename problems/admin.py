from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.http import HttpRequest

from problems.models import (
    Blob,
    DifficultyLabel,
    InputValidator,
    JudgingTask,
    KillEvidence,
    OutputJudge,
    PackageJudge,
    Problem,
    ProblemAlias,
    Solution,
    Tag,
    TestCase,
    TestKit,
    TestSuite,
    Verdict,
)

# ModelAdmin and TabularInline are generic only in django-stubs (subscripting them at run time
# needs their monkeypatch, a dev-only package). Most admins here only configure: any model will do.
if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Any]
    _TabularInline = admin.TabularInline[Any, Any]
    _BlobAdminBase = admin.ModelAdmin[Blob]
else:
    _ModelAdmin = _BlobAdminBase = admin.ModelAdmin
    _TabularInline = admin.TabularInline


class DifficultyInline(_TabularInline):
    model = DifficultyLabel
    extra = 0


class AliasInline(_TabularInline):
    model = ProblemAlias
    extra = 0


@admin.register(Problem)
class ProblemAdmin(_ModelAdmin):
    list_display = ("pid", "title", "source", "platform", "time_limit_ms", "memory_limit_mb")
    list_filter = ("source", "platform")
    search_fields = ("pid", "title")
    filter_horizontal = ("tags",)
    inlines = [DifficultyInline, AliasInline]


@admin.register(Tag)
class TagAdmin(_ModelAdmin):
    search_fields = ("name",)


@admin.register(ProblemAlias)
class ProblemAliasAdmin(_ModelAdmin):
    list_display = ("source", "pid", "problem")
    search_fields = ("pid", "problem__pid")
    raw_id_fields = ("problem",)


@admin.register(DifficultyLabel)
class DifficultyLabelAdmin(_ModelAdmin):
    list_display = ("problem", "source", "level", "score")
    list_filter = ("source", "level")
    raw_id_fields = ("problem",)


@admin.register(Solution)
class SolutionAdmin(_ModelAdmin):
    list_display = ("__str__", "problem", "role", "language", "source", "reliability", "gold_verdict", "origin")
    list_filter = ("role", "language", "gold_verdict")
    search_fields = ("problem__pid", "name", "source")
    raw_id_fields = ("problem",)
    readonly_fields = ("code_sha256",)


@admin.register(InputValidator, OutputJudge)
class VersionedCodeAdmin(_ModelAdmin):
    list_display = ("problem", "version", "origin", "model_name", "edited_by", "created_at")
    list_filter = ("origin",)
    search_fields = ("problem__pid",)
    raw_id_fields = ("problem", "edited_by")


@admin.register(PackageJudge)
class PackageJudgeAdmin(_ModelAdmin):
    list_display = ("problem", "kind", "name", "language", "refused", "created_at")
    list_filter = ("kind", "language")
    search_fields = ("problem__pid", "name")
    raw_id_fields = ("problem",)
    readonly_fields = ("digest", "created_at")


@admin.register(TestKit)
class TestKitAdmin(_ModelAdmin):
    list_display = ("problem", "version", "origin", "model_name", "needs_output_judge", "created_at")
    list_filter = ("origin",)
    search_fields = ("problem__pid",)
    raw_id_fields = ("problem", "validator", "output_judge", "created_by")


@admin.register(TestSuite)
class TestSuiteAdmin(_ModelAdmin):
    list_display = ("problem", "version", "origin", "status", "test_count", "total_bytes", "created_at")
    list_filter = ("status", "origin")
    search_fields = ("problem__pid",)
    raw_id_fields = ("problem", "kit", "validator", "output_judge")


@admin.register(TestCase)
class TestCaseAdmin(_ModelAdmin):
    list_display = ("suite", "ordinal", "kind", "generator", "call_number", "input_size", "output_size")
    list_filter = ("kind",)
    raw_id_fields = ("suite", "oracle")
    # 2 million rows: the changelist must not count them or join problems.
    show_full_result_count = False
    list_select_related = ("suite",)


@admin.register(Blob)
class BlobAdmin(_BlobAdminBase):
    list_display = ("sha256", "size", "stored_size", "inline", "created_at")
    search_fields = ("sha256",)
    show_full_result_count = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Blob]:
        # Inline bodies can be 16 KB each: list pages say whether a body is inline, never load it.
        inline = ExpressionWrapper(Q(data__isnull=False), output_field=BooleanField())
        return super().get_queryset(request).defer("data").annotate(is_inline=inline)

    @admin.display(boolean=True, description="inline")
    def inline(self, obj: Blob) -> bool:
        inline: bool = obj.is_inline  # type: ignore[attr-defined]  # annotated by get_queryset
        return inline


@admin.register(Verdict)
class VerdictAdmin(_ModelAdmin):
    list_display = ("solution", "suite", "verdict", "passed", "total", "complete", "judged_at")
    list_filter = ("verdict",)
    raw_id_fields = ("solution", "suite")


@admin.register(KillEvidence)
class KillEvidenceAdmin(_ModelAdmin):
    list_display = ("suite", "ordinal", "program", "source", "created_at")
    list_filter = ("source",)
    raw_id_fields = ("suite",)


@admin.register(JudgingTask)
class JudgingTaskAdmin(_ModelAdmin):
    list_display = ("solution", "suite", "mode", "status", "created_at", "finished_at")
    list_filter = ("status",)
    raw_id_fields = ("solution", "suite")
