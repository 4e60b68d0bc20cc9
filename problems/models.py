"""The catalogue: problems, solutions, validators, judges, kits, suites, tests and verdicts.

Test inputs and outputs are not stored in rows: a TestCase holds the SHA-256 and size of
each body (content-addressed files, see problems/blobs.py) plus a short preview, so
pages never load a test body and identical data is stored once.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.joblife import JobKind, kind_register


class Language(models.TextChoices):
    PYTHON3 = "python3", "Python 3"
    CPP = "cpp", "C++"
    JAVA = "java", "Java"
    C = "c", "C"
    # Kept from imports so nothing is lost, but the sandbox does not run them.
    PYTHON2 = "python2", "Python 2 (unsupported)"
    OTHER = "other", "Other (unsupported)"


SUPPORTED_LANGUAGES = frozenset({Language.PYTHON3, Language.CPP, Language.JAVA, Language.C})


class Tag(models.Model):
    name = models.CharField(max_length=100, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Comparison(models.TextChoices):
    # testlib's wcmp and Kattis' default: whitespace-separated tokens, spacing and line breaks free.
    TOKENS = "tokens", "Tokens (whitespace-insensitive)"
    # Byte for byte, except a trailing newline at the very end.
    EXACT = "exact", "Exact"


# A problem's limits when its source names none (every importer and the model use these).
DEFAULT_TIME_LIMIT_MS = 2000
DEFAULT_MEMORY_LIMIT_MB = 256


class Problem(models.Model):
    # Where the row came from (dataset or "demo") and its id there; (source, pid) is the upsert key.
    source = models.CharField(max_length=50, default="native")
    pid = models.CharField(max_length=200)
    title = models.CharField(max_length=500)
    statement = models.TextField(help_text="Markdown with $...$ math")
    platform = models.CharField(max_length=50, blank=True, db_index=True)
    url = models.URLField(max_length=500, blank=True)
    # The problem's id on the judge that first published it ("codeforces:1234A"); how imports
    # recognise one problem arriving from several datasets and mirrors (problems/importers/identity.py).
    platform_id = models.CharField(max_length=200, blank=True, db_index=True)
    contest_date = models.DateField(null=True, blank=True)
    time_limit_ms = models.PositiveIntegerField(default=DEFAULT_TIME_LIMIT_MS)
    memory_limit_mb = models.PositiveIntegerField(default=DEFAULT_MEMORY_LIMIT_MB)
    # How an output is compared with the expected one when the problem has no judging function.
    comparison = models.CharField(max_length=10, choices=Comparison.choices, default=Comparison.TOKENS)
    tags = models.ManyToManyField(Tag, blank=True, related_name="problems")
    # List of {"input": str, "output": str}; small by nature, shown on the problem page.
    samples = models.JSONField(default=list, blank=True)
    # Anything a dataset carries that has no column yet, so a native export stays lossless.
    extra = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pid"]
        constraints = [models.UniqueConstraint(fields=["source", "pid"], name="problem_unique_pid_per_source")]
        indexes = [
            models.Index(fields=["pid"]),
            models.Index(fields=["title"]),
            models.Index(fields=["platform", "pid"]),
        ]

    def __str__(self) -> str:
        return f"{self.pid}: {self.title}"


class ProblemAlias(models.Model):
    """The same problem seen in another dataset (a mirror), merged into one Problem."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="aliases")
    source = models.CharField(max_length=50)
    pid = models.CharField(max_length=200)
    url = models.URLField(max_length=500, blank=True)

    class Meta:
        verbose_name_plural = "problem aliases"
        constraints = [models.UniqueConstraint(fields=["source", "pid"], name="alias_unique_pid_per_source")]

    def __str__(self) -> str:
        return f"{self.source}:{self.pid} -> {self.problem_id}"


class DifficultyLabel(models.Model):
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="difficulties")
    source = models.CharField(max_length=50, help_text="who rated it, e.g. codeforces, atcoder, luogu")
    level = models.CharField(max_length=50, db_index=True)
    score = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["problem", "source"], name="one_label_per_source")]
        indexes = [models.Index(fields=["source", "level"])]

    def __str__(self) -> str:
        return f"{self.source}: {self.level}"


class Solution(models.Model):
    class Role(models.TextChoices):
        ORACLE = "oracle", "Oracle"
        CANDIDATE = "candidate", "Candidate"

    class GoldVerdict(models.TextChoices):
        AC = "AC", "Accepted"
        WA = "WA", "Wrong answer"
        TLE = "TLE", "Time limit exceeded"
        MLE = "MLE", "Memory limit exceeded"
        RE = "RE", "Runtime error"
        REJECTED = "REJECTED", "Rejected (some failure)"
        UNKNOWN = "UNKNOWN", "Unknown"

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="solutions")
    name = models.CharField(max_length=200, blank=True)
    role = models.CharField(max_length=10, choices=Role.choices, db_index=True)
    language = models.CharField(max_length=10, choices=Language.choices)
    code = models.TextField()
    code_sha256 = models.CharField(max_length=64, db_index=True)
    source = models.CharField(max_length=100, blank=True, help_text="where it came from, e.g. atcoder_submission")
    # 1 is the most trusted oracle; materialisation tries oracles in ascending rank.
    reliability = models.PositiveIntegerField(null=True, blank=True)
    gold_verdict = models.CharField(max_length=10, choices=GoldVerdict.choices, default=GoldVerdict.UNKNOWN)
    origin = models.CharField(max_length=100, default="human", help_text="human, or the model that wrote it")
    note = models.CharField(max_length=500, blank=True)
    # A problem package's submission: the folder it was filed under (accepted, wrong_answer,
    # slow_accepted, partially_accepted, ...), kept as the package says it even where
    # gold_verdict cannot say it (problems/package_fidelity.py judges against it).
    package_verdict = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["role", "reliability", "id"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "role", "code_sha256"], name="solution_unique_code"),
        ]

    def __str__(self) -> str:
        return self.name or f"{self.role} #{self.pk} ({self.language})"

    @property
    def supported(self) -> bool:
        return self.language in SUPPORTED_LANGUAGES


class CodeOrigin(models.TextChoices):
    LLM = "llm", "Written by an LLM"
    IMPORTED = "imported", "Imported"
    EDITED = "edited", "Edited by a person"


class VersionedCode(models.Model):
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="%(class)ss")
    version = models.PositiveIntegerField()
    code = models.TextField()
    origin = models.CharField(max_length=10, choices=CodeOrigin.choices)
    model_name = models.CharField(max_length=100, blank=True, help_text="the LLM that wrote it, if any")
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    change_note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["problem", "-version"]


class InputValidator(VersionedCode):
    """Python defining validate_input(input_str) -> bool."""

    # Inputs a reviewer showed to be wrongly accepted; every later version must reject them.
    regression_inputs = models.JSONField(default=list, blank=True)

    class Meta(VersionedCode.Meta):
        constraints = [models.UniqueConstraint(fields=["problem", "version"], name="validator_unique_version")]

    def __str__(self) -> str:
        return f"validator v{self.version} of {self.problem_id}"


class OutputJudge(VersionedCode):
    """Python defining output_judging_function(input_str, candidate_output, reference_output) -> bool."""

    class Meta(VersionedCode.Meta):
        constraints = [models.UniqueConstraint(fields=["problem", "version"], name="judge_unique_version")]

    def __str__(self) -> str:
        return f"judge v{self.version} of {self.problem_id}"


class PackageJudge(models.Model):
    """A judge a problem package brings, run with its own format's contract rather than ours
    (problems/packages/external.py): a testlib checker or validator, a Kattis output or input
    validator, or problemtools' default output validator with its flags (no code of its own).
    Its files are the package's sources and headers as they came (testlib.h among them when
    the package ships it)."""

    class Kind(models.TextChoices):
        TESTLIB_CHECKER = "testlib_checker", "testlib checker"
        KATTIS_OUTPUT_VALIDATOR = "kattis_output_validator", "Kattis output validator"
        # problemtools' default output validator with validator_flags (trusted code, no files)
        KATTIS_DEFAULT = "kattis_default", "Kattis default output validator"
        TESTLIB_VALIDATOR = "testlib_validator", "testlib input validator"
        KATTIS_INPUT_VALIDATOR = "kattis_input_validator", "Kattis input validator"
        # imported and kept; judging with them needs interactive support
        KATTIS_INTERACTOR = "kattis_interactor", "Kattis interactive validator"
        TESTLIB_INTERACTOR = "testlib_interactor", "testlib interactor"

    OUTPUT_KINDS = ("testlib_checker", "kattis_output_validator", "kattis_default")
    INPUT_KINDS = ("testlib_validator", "kattis_input_validator")
    INTERACTOR_KINDS = ("kattis_interactor", "testlib_interactor")

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="package_judges")
    kind = models.CharField(max_length=30, choices=Kind.choices)
    name = models.CharField(max_length=200, blank=True, help_text="its path in the package")
    # cpp, python3, or what the package used (kept, refused when run)
    language = models.CharField(max_length=20, blank=True)
    entry = models.CharField(max_length=300, blank=True, help_text="the file that holds main")
    files = models.JSONField(default=dict, blank=True, help_text="path -> text")
    flags = models.JSONField(default=list, blank=True, help_text="arguments after the fixed ones")
    # why it cannot judge here (no testlib.h, an unsupported language), empty when it can
    refused = models.CharField(max_length=500, blank=True)
    digest = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.name} of {self.problem_id}"


class TestKit(models.Model):
    """What an LLM produced (or a dataset shipped) to make tests: HardTests' test-case kit.

    Lives in problems/ rather than generation/ because importers (problems/) create kits too,
    and the dependency direction is generation -> problems.
    """

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="kits")
    version = models.PositiveIntegerField()
    origin = models.CharField(max_length=10, choices=CodeOrigin.choices)
    model_name = models.CharField(max_length=100, blank=True)
    # RESTRICT, not PROTECT: a validator cannot vanish under its kit, but deleting the whole
    # problem (which cascades to both) is allowed.
    validator = models.ForeignKey(InputValidator, null=True, blank=True, on_delete=models.RESTRICT, related_name="kits")
    needs_output_judge = models.BooleanField(default=False)
    output_judge = models.ForeignKey(OutputJudge, null=True, blank=True, on_delete=models.RESTRICT, related_name="kits")
    direct_inputs = models.JSONField(default=list, blank=True, help_text="LLMGen_input: list of input strings")
    regular_generator = models.TextField(blank=True, help_text="RPGen_SPGen_input_generator (Python)")
    hacking_generator = models.TextField(blank=True, help_text="HackGen_input_generator (Python)")
    # Klear-style generators: Python defining generate_test_inputs() -> list[str].
    batch_generator = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem", "-version"]
        constraints = [models.UniqueConstraint(fields=["problem", "version"], name="kit_unique_version")]

    def __str__(self) -> str:
        return f"kit v{self.version} of {self.problem_id}"


class TestSuite(models.Model):
    class Status(models.TextChoices):
        BUILDING = "building", "Building"
        ACTIVE = "active", "Active"
        SUPERSEDED = "superseded", "Superseded"
        FAILED = "failed", "Failed"

    class Origin(models.TextChoices):
        GENERATED = "generated", "Generated"
        IMPORTED = "imported", "Imported"
        OFFICIAL = "official", "Official"
        PUBLIC = "public", "Public samples"
        # No human oracle: outputs come from an LLM-written brute force (HardTests A.7) or from
        # model-written pairs (AceCoder); `trust` says how they were checked.
        ORACLE_FREE = "oracle_free", "Oracle-free (model-made outputs)"

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="suites")
    version = models.PositiveIntegerField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.BUILDING, db_index=True)
    origin = models.CharField(max_length=12, choices=Origin.choices, db_index=True)
    kit = models.ForeignKey(TestKit, null=True, blank=True, on_delete=models.SET_NULL, related_name="suites")
    validator = models.ForeignKey(InputValidator, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    output_judge = models.ForeignKey(OutputJudge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # A package's own checker or output validator; judges the outputs instead of output_judge.
    checker = models.ForeignKey(PackageJudge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    test_count = models.PositiveIntegerField(default=0)
    total_bytes = models.PositiveBigIntegerField(default=0)
    counts_by_kind = models.JSONField(default=dict, blank=True)
    note = models.CharField(max_length=500, blank=True)
    # Outputs came from one oracle that no second oracle confirmed (HARDTESTS_MIN_ORACLES=1).
    unverified = models.BooleanField(default=False)
    # Oracle-free suites: {"method", "brute_force", "samples", "cross_check", "model_made_outputs",
    # "time_only_tests", ...} (generation/oracle_free/trust.py); empty for oracle-checked suites.
    trust = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)
    # The kill order (problems/kill_order.py): ordinals in judging order, empty for kind order;
    # the fast subset's ordinals (empty: none known, the full suite); known-wrong programs each
    # test fails ({"ordinal": count}). The revision names the order in judging's suite cache.
    judge_order = models.JSONField(default=list, blank=True)
    fast_ordinals = models.JSONField(default=list, blank=True)
    kill_counts = models.JSONField(default=dict, blank=True)
    order_revision = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["problem", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "version"], name="suite_unique_version"),
            models.UniqueConstraint(
                fields=["problem", "origin"], condition=Q(status="active"), name="one_active_suite_per_origin"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.problem_id} {self.origin} v{self.version} ({self.status})"


class TestCase(models.Model):
    class Kind(models.TextChoices):
        PUBLIC = "public", "Public"
        DIRECT = "direct", "Direct (LLMGen)"
        REGULAR = "regular", "Regular (RPGen)"
        STRATIFIED = "stratified", "Stratified (SPGen)"
        HACKING = "hacking", "Hacking (HackGen)"
        IMPORTED = "imported", "Imported"
        # Oracle-free suites: small edge inputs whose outputs a checked brute force gave.
        EDGE = "edge", "Edge (brute-force outputs)"
        # One maximum-size input with no expected output: passed by finishing within the
        # limits with exit code 0 (judged on time, memory and exit only, never on output).
        TIME_ONLY = "time_only", "Max size (time only)"

    class OutputOrigin(models.TextChoices):
        ORACLE = "", "Oracle or dataset"
        STATEMENT = "statement", "Statement sample"
        BRUTE_FORCE = "brute_force", "LLM brute force (cross-checked)"
        MODEL_PAIR = "model_pair", "Model-written pair (filtered by a model solution)"
        NONE = "none", "None (time only)"

    PREVIEW_CHARS = 200

    suite = models.ForeignKey(TestSuite, on_delete=models.CASCADE, related_name="tests")
    ordinal = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    generator = models.CharField(max_length=200, blank=True, help_text="generator function name")
    call_number = models.PositiveIntegerField(null=True, blank=True)
    # The seed the generator call got (derived from kit version, generator and call number).
    seed = models.BigIntegerField(null=True, blank=True)
    input_sha256 = models.CharField(max_length=64)
    input_size = models.PositiveIntegerField()
    input_preview = models.CharField(max_length=PREVIEW_CHARS, blank=True)
    output_sha256 = models.CharField(max_length=64)
    output_size = models.PositiveIntegerField()
    output_preview = models.CharField(max_length=PREVIEW_CHARS, blank=True)
    validator_version = models.PositiveIntegerField(null=True, blank=True)
    oracle = models.ForeignKey(Solution, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Who made the expected output when no oracle did (oracle-free suites).
    output_origin = models.CharField(max_length=12, choices=OutputOrigin.choices, default="", blank=True)
    # A package's test group, as its folder under data/ ("sample", "secret/group1"); empty otherwise.
    group = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["suite", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["suite", "ordinal"], name="test_unique_ordinal")]
        indexes = [models.Index(fields=["suite", "kind"])]

    def __str__(self) -> str:
        return f"test {self.ordinal} ({self.kind})"


class Blob(models.Model):
    """One stored body, by SHA-256: inline in ``data`` when small, else a file under blobs/."""

    sha256 = models.CharField(max_length=64, primary_key=True)
    size = models.PositiveIntegerField()
    stored_size = models.PositiveIntegerField()
    # The zlib-compressed body when it is at most HARDTESTS_BLOB_INLINE_MAX bytes; null for a
    # body kept as a file in the default storage (and for every body stored before this field).
    data = models.BinaryField(null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.sha256[:12]} ({self.size} B)"


class Verdict(models.Model):
    class Value(models.TextChoices):
        AC = "AC", "Accepted"
        WA = "WA", "Wrong answer"
        TLE = "TLE", "Time limit exceeded"
        MLE = "MLE", "Memory limit exceeded"
        RE = "RE", "Runtime error"
        OLE = "OLE", "Output limit exceeded"
        CE = "CE", "Compilation error"
        SE = "SE", "Sandbox error"

    solution = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="verdicts")
    suite = models.ForeignKey(TestSuite, on_delete=models.CASCADE, related_name="verdicts")
    verdict = models.CharField(max_length=4, choices=Value.choices)
    passed = models.PositiveIntegerField()
    total = models.PositiveIntegerField()
    # True when every test ran (mode "all"); False when judging stopped at the first failure.
    complete = models.BooleanField(default=False)
    # [{"ordinal", "verdict", "time_ms", "wall_ms", "memory_kb"}, ...] in run order.
    results = models.JSONField(default=list)
    message = models.TextField(blank=True, help_text="compiler message or sandbox error")
    judged_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["solution", "suite"], name="one_verdict_per_solution_suite")]

    def __str__(self) -> str:
        return f"{self.verdict} {self.passed}/{self.total}"


class KillEvidence(models.Model):
    """A test that failed a program which is no candidate of the problem: a curation job's
    completion, or a verification sent to the API (when HARDTESTS_KILL_ORDER_FROM_API is on).
    Beside the known-wrong candidates' verdicts, what teaches a suite its kill order
    (problems/kill_order.py). A program is its digest: the same one sent again adds nothing."""

    class Source(models.TextChoices):
        API = "api", "verification API"
        CURATION = "curation", "curation job"

    suite = models.ForeignKey(TestSuite, on_delete=models.CASCADE, related_name="kill_evidence")
    program = models.CharField(max_length=64, help_text="sha256 of the language and the code")
    ordinal = models.PositiveIntegerField()
    source = models.CharField(max_length=10, choices=Source.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["suite", "program", "ordinal"],
                                               name="one_kill_evidence_per_program_test")]

    def __str__(self) -> str:
        return f"suite #{self.suite_id} test {self.ordinal}: {self.program[:12]} ({self.source})"


class QueuedJobRecord(models.Model):
    """What a row needs to follow one RQ job from the database: pages read job state here,
    never from Redis, and a crashed job stays visible as failed."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error = models.TextField(blank=True)
    job_id = models.CharField(max_length=64, blank=True)
    # The RQ worker that claimed it (core.joblife.claim), and when: what a page and a sweep name.
    worker = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


class JudgingTask(QueuedJobRecord):
    """One queued judging of a solution against a suite (the verdict matrix's pending cells)."""

    solution = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="judging_tasks")
    suite = models.ForeignKey(TestSuite, on_delete=models.CASCADE, related_name="judging_tasks")
    mode = models.CharField(max_length=10, default="all")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["suite", "status"])]

    def __str__(self) -> str:
        return f"judge {self.solution_id} on suite {self.suite_id} ({self.status})"


def queued_job_kind(name: str, model: type[QueuedJobRecord]) -> JobKind:
    """The lifecycle of a QueuedJobRecord kind (core.joblife): one sandbox call per job, so no
    beat of its own; a dead worker's row is failed with the reason once its RQ job is dead."""
    status = QueuedJobRecord.Status
    return JobKind(name=name, model=model, queued=status.QUEUED, running=(status.RUNNING,), done=status.DONE,
                   failed=status.FAILED, cancelled=status.FAILED)


JUDGING_TASK = kind_register(queued_job_kind("judging_task", JudgingTask))
