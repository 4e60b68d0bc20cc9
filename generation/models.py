"""Generation runs (one per attempt to make a suite) and the LLM calls they made."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.joblife import JobKind, kind_register
from problems.models import Problem, TestKit, TestSuite


class FailureReason(models.TextChoices):
    NO_VALID_ORACLE = "no_valid_oracle", "No valid oracle"
    INPUT_GENERATION_FAILED = "input_generation_failed", "Input generation failed"
    OUTPUT_VERIFICATION_FAILED = "output_verification_failed", "Output verification failed"
    CORRECT_PROGRAM_REJECTED = "correct_program_rejected", "Correct program rejected"
    JUDGE_INVALID = "judge_invalid", "Judge invalid"
    VALIDATOR_INVALID = "validator_invalid", "Validator invalid"
    VALIDATOR_ERROR = "validator_error", "Validator error"
    INPUT_BUDGET_EXCEEDED = "input_budget_exceeded", "Input budget exceeded"
    OUTPUT_BUDGET_EXCEEDED = "output_budget_exceeded", "Output budget exceeded"
    SUITE_TOO_LARGE = "suite_too_large", "Suite too large"
    LLM_REPLY_INVALID = "llm_reply_invalid", "LLM reply invalid"
    LLM_UNAVAILABLE = "llm_unavailable", "LLM unavailable"
    SANDBOX_ERROR = "sandbox_error", "Sandbox error"
    CANCELLED = "cancelled", "Cancelled"
    WORKER_DIED = "worker_died", "Worker died"
    INTERNAL_ERROR = "internal_error", "Internal error"
    # Oracle-free modes (generation/oracle_free): the LLM's brute force fails the statement's
    # samples, no independent program confirms it, or too few model-written tests survive.
    BRUTE_FORCE_REJECTED = "brute_force_rejected", "Brute force fails the samples"
    BRUTE_FORCE_UNCONFIRMED = "brute_force_unconfirmed", "Brute force not confirmed"
    TOO_FEW_TESTS = "too_few_tests", "Too few tests"


class GenerationRun(models.Model):
    class Mode(models.TextChoices):
        FROM_SCRATCH = "from_scratch", "From scratch (LLM)"
        FROM_KIT = "from_kit", "From the current kit"
        # No human oracle needed (generation/oracle_free).
        ORACLE_FREE = "oracle_free", "Oracle-free (HardTests A.7)"
        ACECODER = "acecoder", "AceCoder baseline (oracle-free)"

    # Modes that need no oracle: no pre-flight, no LLM stage of campaigns (generation/oracle_free).
    ORACLE_FREE_MODES = frozenset({Mode.ORACLE_FREE, Mode.ACECODER})

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    class Stage(models.TextChoices):
        QUEUED = "queued", "Queued"
        LLM_VALIDATOR = "llm_validator", "LLM: validator and judge"
        LLM_INPUTS = "llm_inputs", "LLM: inputs and generators"
        GENERATING = "generating", "Running generators"
        VALIDATING = "validating", "Validating inputs"
        ORACLES = "oracles", "Running oracles"
        SAVING = "saving", "Saving the suite"
        JUDGING = "judging", "Judging candidates"
        DONE = "done", "Done"

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="generation_runs")
    mode = models.CharField(max_length=15, choices=Mode.choices)
    model_name = models.CharField(max_length=100, blank=True)
    # Which inputs prompt call 2 uses (generation.profiles): hardtestgen, minimal, structured, contrastive.
    profile = models.CharField(max_length=20, default="hardtestgen")
    # The language the LLM writes the generators and the checker in: python3 (the kit contract) or
    # cpp (testlib programs, generation/materialise/testlib.py; `generate_tests --kit-language cpp`).
    kit_language = models.CharField(max_length=10, choices=[("python3", "Python"), ("cpp", "C++ (testlib)")],
                                    default="python3")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    stage = models.CharField(max_length=15, choices=Stage.choices, default=Stage.QUEUED)
    # {"llm_validator": 1.2, "generating": 3.4, ...} seconds per stage.
    stage_seconds = models.JSONField(default=dict, blank=True)
    # {"direct": {"generated": 10, "invalid": 1, "duplicate": 0, "disagreement": 0, "kept": 9}, ...}
    counts = models.JSONField(default=dict, blank=True)
    failure_reason = models.CharField(max_length=30, choices=FailureReason.choices, blank=True, db_index=True)
    error = models.TextField(blank=True)
    log = models.TextField(blank=True)
    # Inputs the validator crashed or timed out on: [{"kind", "generator", "call_number", "error", "input"}].
    validator_errors = models.JSONField(default=list, blank=True)
    kit = models.ForeignKey(TestKit, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    suite = models.OneToOneField(
        TestSuite, null=True, blank=True, on_delete=models.SET_NULL, related_name="generation_run"
    )
    job_id = models.CharField(max_length=64, blank=True)
    cancel_requested = models.BooleanField(default=False)
    # After the suite activates, queue judging of the problem's candidates against it.
    judge_candidates = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Touched by the executing process every few seconds; a RUNNING run whose heartbeat
    # stops is one whose worker died (see generation.services.stale_runs_sweep).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Campaign runs: the LLM stage claims QUEUED runs from the table itself (see
    # generation.campaigns.llmstage); not_before holds a run back after a 429/5xx, and
    # llm_wait_since marks when the endpoint first failed it (llm_unavailable after a total wait).
    campaign = models.ForeignKey("Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    not_before = models.DateTimeField(null=True, blank=True)
    llm_wait_since = models.DateTimeField(null=True, blank=True)
    requeues = models.PositiveIntegerField(default=0, help_text="times put back on a queue (backoff, dead worker)")
    # Highest LLMCall id already added to the campaign's token totals (no double counting on resume).
    accounted_call_id = models.BigIntegerField(default=0)

    # Not fields (annotations only): set on some instances for their callers and templates.
    created: bool  # generation.services.generation_run_start: False when an open run was returned instead
    duration_s: float | None  # generation.views: seconds from start to finish (or now)
    kept: int | None  # generation.views: tests kept

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Two open runs for one problem would double the spend and race on the active suite.
            models.UniqueConstraint(fields=["problem"], condition=Q(status__in=["queued", "running"]),
                                    name="generation_one_open_run_per_problem"),
            models.UniqueConstraint(fields=["campaign", "problem"], name="generation_one_run_per_campaign_problem"),
        ]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="generation_run_sweep_idx"),
            models.Index(fields=["campaign", "status"], name="generation_run_campaign_idx"),
            # The LLM stage's queue: claiming the next runs reads this index in id order, so the
            # cost does not depend on how many runs wait for the sandbox queue.
            models.Index(fields=["id"], name="generation_run_llm_queue_idx",
                         condition=Q(status="queued", job_id="", kit__isnull=True, mode="from_scratch")),
        ]

    def __str__(self) -> str:
        return f"run #{self.pk} of {self.problem_id} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED


def _run_stale_after_s() -> float:
    return float(settings.HARDTESTS_RUN_STALE_S)


# A run's job id is its RQ job's, or "llm:<token>" while an LLM-stage worker holds it (no RQ job);
# its own sweep (generation.services.stale_runs_sweep) puts a dead campaign run back on its queue
# and fails a building suite with a failed run.
GENERATION_RUN = kind_register(JobKind(
    name="generation_run", model=GenerationRun, queued=GenerationRun.Status.QUEUED,
    running=(GenerationRun.Status.RUNNING,), done=GenerationRun.Status.SUCCEEDED, failed=GenerationRun.Status.FAILED,
    cancelled=GenerationRun.Status.CANCELLED, error_max=20000, worker_field=None, stale_after_s=_run_stale_after_s,
    cancel_flag="cancel_requested", sweep="generation.services.stale_runs_sweep",
))


class LLMCall(models.Model):
    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="llm_calls")
    purpose = models.CharField(max_length=30, help_text="validator, inputs, or a retry of one")
    prompt_version = models.CharField(max_length=50, blank=True)
    messages = models.JSONField(default=list)
    reply = models.TextField(blank=True)
    model_name = models.CharField(max_length=100)
    temperature = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Hidden reasoning tokens of reasoning models (part of completion_tokens), when the endpoint says.
    reasoning_tokens = models.PositiveIntegerField(null=True, blank=True)
    # "stop", or "length" when the reply was cut off at HARDTESTS_LLM_MAX_TOKENS.
    finish_reason = models.CharField(max_length=20, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Why the reply was rejected by generation.parsing (empty when it was accepted).
    parse_error = models.TextField(blank=True)
    attempt = models.PositiveSmallIntegerField(default=1, help_text="transport attempt number (retries count up)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.purpose} call of run {self.run_id}"


class Campaign(models.Model):
    """Generation over many problems at once: one run per problem, totals, a cost cap."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        PAUSED = "paused", "Paused"
        CANCELLED = "cancelled", "Cancelled"
        FINISHED = "finished", "Finished"

    name = models.CharField(max_length=100, unique=True)
    mode = models.CharField(max_length=15, choices=GenerationRun.Mode.choices, default=GenerationRun.Mode.FROM_SCRATCH)
    model_name = models.CharField(max_length=100, blank=True)
    # {"validator": "validator_v1", "inputs": "inputs_v1"} at creation.
    prompt_versions = models.JSONField(default=dict, blank=True)
    # The selection as asked: {"source": ..., "platform": ..., "missing": true, "limit": ...}.
    filters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING, db_index=True)
    pause_reason = models.CharField(max_length=200, blank=True)
    cost_cap_usd = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    problem_count = models.PositiveIntegerField(default=0)
    # Running totals (added once per LLM call via GenerationRun.accounted_call_id).
    llm_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"campaign {self.name} ({self.status})"

    @property
    def open(self) -> bool:
        return self.status in (self.Status.RUNNING, self.Status.PAUSED)


class RefinementRound(models.Model):
    """One round of the feedback loop of a run: the suite it made and how it separates the candidates.

    Round 0 is the first suite (calls 1 and 2, repairs, review); each later round is the
    suite made from the kit the LLM revised after seeing the false negatives and positives.
    """

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField()
    kit = models.ForeignKey(TestKit, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    suite = models.ForeignKey(TestSuite, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    test_count = models.PositiveIntegerField(default=0)
    tests_added = models.PositiveIntegerField(default=0)
    tests_removed = models.PositiveIntegerField(default=0)
    # {"tuning": {"tp", "fn", "tn", "fp", "tpr", "tnr"}, "held_out": {...}, "split": "..."}
    scores = models.JSONField(default=dict, blank=True)
    # What this round sent to the LLM: [{"kind": "false_negative"|"false_positive", "solution", "test", ...}]
    sent = models.JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    chosen = models.BooleanField(default=False)
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="one_round_number_per_run")]

    def __str__(self) -> str:
        return f"round {self.number} of run {self.run_id}"

    def score(self, split: str, key: str) -> float | None:
        return (self.scores.get(split) or {}).get(key)
