from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from generation.models import Campaign, GenerationRun, LLMCall, RefinementRound

# ModelAdmin and the inlines are generic only in django-stubs (subscripting them at run time
# needs their monkeypatch, a dev-only package)
if TYPE_CHECKING:
    _LLMCallInlineBase = admin.StackedInline[LLMCall, GenerationRun]
    _RefinementRoundInlineBase = admin.TabularInline[RefinementRound, GenerationRun]
    _GenerationRunAdminBase = admin.ModelAdmin[GenerationRun]
    _LLMCallAdminBase = admin.ModelAdmin[LLMCall]
    _CampaignAdminBase = admin.ModelAdmin[Campaign]
    _RefinementRoundAdminBase = admin.ModelAdmin[RefinementRound]
else:
    _LLMCallInlineBase = admin.StackedInline
    _RefinementRoundInlineBase = admin.TabularInline
    _GenerationRunAdminBase = _LLMCallAdminBase = admin.ModelAdmin
    _CampaignAdminBase = _RefinementRoundAdminBase = admin.ModelAdmin


class LLMCallInline(_LLMCallInlineBase):
    model = LLMCall
    extra = 0
    readonly_fields = (
        "purpose", "prompt_version", "messages", "reply", "model_name", "temperature",
        "prompt_tokens", "completion_tokens", "latency_ms", "error", "created_at",
    )


class RefinementRoundInline(_RefinementRoundInlineBase):
    model = RefinementRound
    extra = 0
    readonly_fields = ("number", "kit", "suite", "test_count", "tests_added", "tests_removed", "scores", "sent",
                       "prompt_tokens", "completion_tokens", "chosen", "note")


@admin.register(GenerationRun)
class GenerationRunAdmin(_GenerationRunAdminBase):
    list_display = ("id", "problem", "mode", "status", "stage", "failure_reason", "created_at", "finished_at")
    list_filter = ("status", "mode", "failure_reason")
    search_fields = ("problem__pid",)
    raw_id_fields = ("problem", "kit", "suite", "created_by")
    inlines = [LLMCallInline, RefinementRoundInline]


@admin.register(LLMCall)
class LLMCallAdmin(_LLMCallAdminBase):
    list_display = ("run", "purpose", "model_name", "prompt_tokens", "completion_tokens", "latency_ms", "created_at")
    raw_id_fields = ("run",)


@admin.register(Campaign)
class CampaignAdmin(_CampaignAdminBase):
    """Read-mostly: campaigns are started, paused and resumed from their page or `generate_tests`."""

    list_display = ("name", "status", "model_name", "problem_count", "llm_calls", "cost_usd", "cost_cap_usd",
                    "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("name",)
    readonly_fields = ("problem_count", "llm_calls", "prompt_tokens", "completion_tokens", "cost_usd",
                       "created_by", "created_at", "finished_at")


@admin.register(RefinementRound)
class RefinementRoundAdmin(_RefinementRoundAdminBase):
    list_display = ("run", "number", "test_count", "tests_added", "tests_removed", "chosen")
    raw_id_fields = ("run", "kit", "suite")
