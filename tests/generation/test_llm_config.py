"""An LLMConfig is a value handed to the client, not a change of settings: two endpoints serve
callers side by side in one process, a run's recorder carries its endpoint to every ask(), and
the Table 8 stand-in is reached through its config while the settings stay as they were."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from generation.asking import ask
from generation.llm import LLMConfig, chat
from generation.models import GenerationRun
from generation.recorder import RunRecorder
from review.evaluation.oracle_free_standin import standin_llm
from tests.generation.conftest import FakeLLM, make_problem, start_fake_llm

# chat() takes an LLM concurrency slot in Redis: not the fast tier (tests/tiers.py)
needs_redis = pytest.mark.slow

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def _run(model: str = "", pid: str = "test/sum") -> GenerationRun:
    return GenerationRun.objects.create(problem=make_problem(pid), mode=GenerationRun.Mode.FROM_SCRATCH,
                                        model_name=model)


def test_from_settings_reads_the_settings_and_the_key_stays_out_of_its_repr(settings) -> None:
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = "http://llm.example/v1", "sk-secret-123"
    settings.HARDTESTS_LLM_MODEL, settings.HARDTESTS_LLM_MAX_TOKENS = "m-1", 77
    settings.HARDTESTS_LLM_REASONING, settings.HARDTESTS_ACECODER_SOLUTION_MODEL = True, " solver "
    config = LLMConfig.from_settings()
    assert (config.base_url, config.api_key, config.model, config.max_tokens, config.reasoning,
            config.solution_model) == ("http://llm.example/v1", "sk-secret-123", "m-1", 77, True, "solver")
    assert config.configured and "sk-secret" not in repr(config)
    assert not LLMConfig().configured


@needs_redis
@pytest.mark.django_db(transaction=True)
def test_two_endpoints_serve_threads_side_by_side_each_call_at_its_own(fake_llm: FakeLLM) -> None:
    other, server = start_fake_llm()
    try:
        # the settings name fake_llm's endpoint; one thread asks it, the other asks `other` by config
        mine = replace(LLMConfig.from_settings(), base_url=other.url, api_key="other-key", model="other-model",
                       temperature=0.7, max_tokens=123)
        fake_llm.reply(*[f"settings {i}" for i in range(4)])
        other.reply(*[f"config {i}" for i in range(4)])
        replies: dict[str, list[str]] = {"settings": [], "config": []}
        runs = [_run(pid="test/a"), _run(pid="test/b")]

        def ask_n(key: str, run: GenerationRun, llm: LLMConfig | None) -> None:
            for _ in range(4):
                replies[key].append(chat(run=run, purpose="validator", messages=MESSAGES, llm=llm)[0])

        threads = [threading.Thread(target=ask_n, args=("settings", runs[0], None)),
                   threading.Thread(target=ask_n, args=("config", runs[1], mine))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(replies["settings"]) == [f"settings {i}" for i in range(4)]
        assert sorted(replies["config"]) == [f"config {i}" for i in range(4)]
        assert [r["model"] for r in fake_llm.requests] == ["fake-model"] * 4
        assert [(r["model"], r["temperature"], r["max_tokens"]) for r in other.requests] == [
            ("other-model", 0.7, 123)] * 4
        assert set(runs[1].llm_calls.values_list("model_name", flat=True)) == {"other-model"}
    finally:
        server.shutdown()
        server.server_close()


@needs_redis
@pytest.mark.django_db
def test_a_runs_recorder_carries_its_endpoint_to_ask(settings) -> None:
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""  # the settings name no endpoint at all
    fake, server = start_fake_llm()
    try:
        fake.reply("from the run's endpoint")
        run = _run()
        rec = RunRecorder(run, llm=LLMConfig(base_url=fake.url, api_key="k", model="rec-model", max_retries=0))
        parsed, convo = ask(run, rec, purpose="validator", prompt_version="v", messages=MESSAGES, parse=str)
        assert parsed == "from the run's endpoint" and convo[-1]["content"] == parsed
        assert [r["model"] for r in fake.requests] == ["rec-model"]
    finally:
        server.shutdown()
        server.server_close()


@needs_redis
@pytest.mark.django_db
def test_the_table8_stand_in_is_reached_by_its_config_and_leaves_the_settings_alone(settings) -> None:
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.HARDTESTS_ACECODER_SOLUTION_MODEL = "some-solver"
    with standin_llm([]) as standin:
        assert standin.answerable == 0
        assert standin.llm.base_url.startswith("http://127.0.0.1:") and standin.llm.model == "demo-standin"
        assert standin.llm.solution_model == ""
        assert (settings.OPENAI_BASE_URL, settings.HARDTESTS_LLM_MODEL) == ("", LLMConfig.from_settings().model)
        assert not LLMConfig.from_settings().configured
        reply, call = chat(run=_run(), purpose="validator", messages=MESSAGES, llm=standin.llm)
    assert reply == "no stand-in answer for this problem" and call.model_name == "demo-standin"
