"""Which tests are in the fast tier (`make test-fast`), decided at collection by tests/conftest.py.

A test is `fast` unless it needs Redis, the sandbox, a live server, a subprocess against the
test services or a browser, or takes more than about a second. That is read from three things:

- its markers (NOT_FAST_MARKERS: the sandbox's own passes, browsers, Docker, the long tests);
- the fixtures it uses, directly or through others (NOT_FAST_FIXTURES: a real worker, Redis,
  the sandbox, a live server, the materialised demo);
- its file (NOT_FAST_MODULES): files whose tests reach Redis or the sandbox through the code
  they call, which no fixture shows, or which are slow on their own.

The fast tier runs with HARDTESTS_TEST_TIER=fast, where tests/conftest.py starts no Redis and
makes every use of Redis, the sandbox or `worker_env()` raise FastTierViolation, so a test
placed here wrongly fails at once, naming what it reached; the answer is to add its file (or
fixture) below. A new file is fast by default: the full `make test` runs every test either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

NOT_FAST_MARKERS = frozenset({"serial", "alone", "browser", "docker", "slow", "heavy"})

NOT_FAST_FIXTURES = frozenset({
    # pytest-django's server thread, Playwright's browser
    "live_server", "page", "browser", "context",
    # tests/conftest.py: the materialised demo (the sandbox)
    "demo_runs",
    # tests/api/conftest.py (tests/ecosystem reuses them): Redis and real RQ workers
    "_clean_redis", "fake_worker", "sandbox_worker", "broken_sandbox_worker",
    # tests/sandbox/conftest.py
    "sb", "docker_sb",
})

# Directories, files and single tests (`file::name`, parameters aside), relative to the
# repository, each with what its tests reach. Found by running the fast tier on every test
# (HARDTESTS_TEST_TIER=fast: each of these failed with FastTierViolation), or by their time.
NOT_FAST_MODULES: dict[str, str] = {
    "tests/sandbox": "the sandbox itself (the serial pass)",
    "tests/deploy": "live servers, workers and faults",
    "tests/demo": "the materialised demo",
    "tests/ecosystem": "clients against a live API and workers",
    "tests/api": "Redis (rate limits, queues) and workers in every test",
    # interactive packages run a program and an interactor in the sandbox
    "tests/packages/test_python_interactor.py": "the sandbox (both backends)",
    "tests/packages/test_interaction_log.py": "the sandbox and Redis",
    # curation verifies completions in the sandbox
    "tests/curation/test_judge.py": "the sandbox",
    "tests/curation/test_kill_evidence.py": "the sandbox",
    "tests/curation/test_oracle_free_heldout_curation.py": "the sandbox",
    "tests/curation/test_profiles.py": "the sandbox",
    "tests/curation/test_verify_select.py::test_pass_fractions_and_kept_sets_equal_the_hand_count_for_every_tau":
        "the sandbox",
    "tests/curation/test_verify_select.py::test_a_repeated_program_is_verified_once": "the sandbox",
    "tests/curation/test_verify_select.py::test_with_the_copy_off_every_completion_runs": "the sandbox",
    "tests/curation/test_verify_select.py::test_resume_takes_back_stale_claims_and_finishes": "the sandbox",
    # generation materialises kits in the sandbox; its LLM client counts calls in Redis
    "tests/generation/test_campaign.py": "the sandbox and Redis",
    "tests/generation/test_campaign_ratelimit.py": "Redis (the shared rate limits)",
    "tests/generation/test_hostile_judge.py": "the sandbox",
    "tests/generation/test_command_exit_codes.py::test_generate_tests_sync_exits_0_when_every_run_succeeds": "the sandbox",
    "tests/generation/test_command_exit_codes.py::test_demo_materialise_sync_exits_1_when_a_demo_kit_fails": "the sandbox",
    "tests/generation/test_command_exit_codes.py::test_generate_tests_sync_exits_1_when_the_run_fails":
        "a management command in a subprocess",
    "tests/generation/test_commands.py": "the sandbox, Redis and commands in subprocesses",
    "tests/generation/test_llm_client.py": "Redis (the LLM concurrency slots)",
    "tests/generation/test_llm_replies.py": "the sandbox",
    "tests/generation/test_llm_stage.py": "the sandbox",
    "tests/generation/test_materialise.py": "the sandbox",
    "tests/generation/test_oracle_free.py": "the sandbox",
    "tests/generation/test_oracle_free_campaign.py": "Redis",
    "tests/generation/test_oracle_free_heldout.py": "the sandbox",
    "tests/generation/test_pipeline.py": "the sandbox",
    "tests/generation/test_refine_repair.py": "the sandbox",
    "tests/generation/test_refine_review.py": "the sandbox",
    "tests/generation/test_reply_robustness.py::test_finish_reason_reasoning_tokens_and_max_tokens_are_recorded_and_sent":
        "Redis",
    "tests/generation/test_reply_robustness.py::test_a_truncated_reply_is_named_and_fed_back_and_the_run_error_keeps_the_parse_error":
        "the sandbox",
    "tests/generation/test_reply_robustness.py::test_each_sdk_retry_is_recorded_and_retry_after_ms_is_honoured": "Redis",
    "tests/generation/test_reproducible.py": "the sandbox",
    "tests/generation/test_round3.py": "the sandbox",
    "tests/generation/test_round3_heldout.py": "the sandbox",
    "tests/generation/test_self_checks.py": "the sandbox",
    # problems: judging runs in the sandbox and is queued on Redis
    "tests/problems/test_export.py::test_icpc_input_validator_exits_42_or_43_in_the_sandbox": "the sandbox",
    "tests/problems/test_import_database.py::test_command_prints_a_json_summary_and_exits_nonzero_with_one_line":
        "a management command in a subprocess",
    "tests/problems/test_import_klear.py::test_adapted_checker_and_generators_run_in_the_sandbox": "the sandbox",
    "tests/problems/test_jobs.py": "Redis",
    "tests/core/test_joblife.py::test_a_dead_worker_s_job_runs_again_once_then_its_row_fails_with_the_reason":
        "Redis (RQ jobs, the reaper)",
    "tests/core/test_joblife.py::test_a_row_whose_job_vanished_is_swept_after_the_grace": "Redis (RQ jobs)",
    "tests/problems/test_judge_failures.py": "the sandbox",
    "tests/problems/test_judging.py": "the sandbox",
    "tests/problems/test_kill_order.py": "the sandbox",
    "tests/problems/test_oracle_free_heldout_marks.py": "the sandbox",
    "tests/problems/test_oracle_free_judging.py": "the sandbox",
    # review: evaluations judge in the sandbox, studies rematerialise
    "tests/review/test_eval_fast_suites.py": "the sandbox",
    "tests/review/test_eval_page.py": "the sandbox and Redis",
    "tests/review/test_eval_services.py": "the sandbox, Redis and the evaluate command in a subprocess",
    "tests/review/test_oracle_free_table8.py": "the sandbox",
    "tests/review/test_studies_jobs.py": "the sandbox",
    "tests/review/test_studies_views.py::test_validator_edit_from_an_item_makes_new_versions_and_rematerialises":
        "the sandbox",
    "tests/review/test_studies_views.py::test_validator_edit_starts_a_from_kit_generation_run_with_the_new_kit":
        "the sandbox",
    # web pages that start judging
    "tests/web/test_evaluation_lost.py": "Redis (the evaluation's job)",
    "tests/web/test_kit_edit.py::test_validator_that_rejects_a_sample_is_refused_in_the_sandbox": "the sandbox",
    "tests/web/test_kit_edit.py::test_kit_whose_run_failed_is_marked_and_can_be_reverted": "the sandbox",
    "tests/web/test_matrix.py::test_judging_records_the_failing_output_and_message": "the sandbox",
    "tests/web/test_runs.py::test_kit_edit_makes_new_versions_and_rematerialises": "the sandbox",
    # slow without any of those (more than a second of CPU each)
    "tests/docs/test_walkthroughs.py::test_machine_a_of_the_two_machines_page_answers_its_address_and_name":
        "starts processes of its own",
    "tests/docs/test_docs_site.py::test_every_link_of_the_built_docs_resolves": "slow: builds the docs site",
    "tests/problems/test_export_icpc_card.py::test_the_cards_command_compiles_java_with_the_jdk_present":
        "slow: compiles Java",
    "tests/web/test_first_run.py::test_demo_logins_include_a_staff_account_that_opens_admin_and_queues":
        "slow: loads the demo",
    "tests/web/test_first_run.py::test_login_page_lists_the_demo_logins_in_demo_mode_only": "slow: loads the demo",
    "tests/review/test_eval_redundancy.py": "slow: brute-force checks of the near-duplicate kernels, compiled first",
    "tests/hardtests_web/test_settings.py": "slow: each test starts Python processes (and one an embedded Redis)",
    "tests/test_architecture.py": "slow: runs lint-imports and parses every module of the project",
    "tests/test_tiers.py": "runs pytest in subprocesses",
}


def _listed_reason(item: pytest.Item) -> str | None:
    try:
        relative = Path(str(item.path)).relative_to(REPO).as_posix()
    except ValueError:  # a file outside the repository (tests/test_tiers.py's probes)
        return None
    test = f"{relative}::{getattr(item, 'originalname', item.name)}"
    for entry, reason in NOT_FAST_MODULES.items():
        if entry in (relative, test) or relative.startswith(entry.rstrip("/") + "/"):
            return reason
    return None


def not_fast_reason(item: pytest.Item) -> str | None:
    """Why `item` is not in the fast tier, or None when it is."""
    for name in NOT_FAST_MARKERS:
        if item.get_closest_marker(name):
            return f"marked {name}"
    fixtures = set(getattr(item, "fixturenames", ())) & NOT_FAST_FIXTURES
    if fixtures:
        return f"uses {', '.join(sorted(fixtures))}"
    return _listed_reason(item)


def not_fast_path(path: Path) -> bool:
    """A whole file or folder left out of the fast tier: the fast tier does not even import it."""
    try:
        relative = path.relative_to(REPO).as_posix()
    except ValueError:
        return False
    return any(relative == entry or relative.startswith(entry + "/") for entry in NOT_FAST_MODULES if "::" not in entry)


def mark_fast(items: list[pytest.Item]) -> None:
    for item in items:
        if not_fast_reason(item) is None:
            item.add_marker(pytest.mark.fast)
