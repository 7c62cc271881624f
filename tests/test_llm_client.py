"""The LLM port and its openai adapter, against a real local OpenAI-compatible server."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from desktop_app.adapters.llm import OpenAIStructuredLLM, make_llm
from desktop_app.core.llm import (
    LLMBudget,
    LLMBudgetExceeded,
    LLMError,
    LLMInvalidOutput,
    LLMRateLimited,
    LLMRefused,
    LLMUnavailable,
    LLMUsage,
    assert_no_secrets,
    redact,
)
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest

API_KEY = "sk-test-DO-NOT-LEAK-7b3e91"
SECRET = "hunter2-correct-horse"
CHAT = "/v1/chat/completions"


class Click(BaseModel):
    kind: Literal["click"] = "click"
    target: str


class Fill(BaseModel):
    kind: Literal["fill"] = "fill"
    target: str
    value: str


class Plan(BaseModel):
    """What the tests ask the LLM for: a name and a discriminated list of steps."""

    name: str
    steps: list[Annotated[Click | Fill, Field(discriminator="kind")]]


GOOD = {"name": "Log in", "steps": [{"kind": "click", "target": "Sign in"}]}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def client(server: FakeOpenAIServer, **options: Any) -> OpenAIStructuredLLM:
    options.setdefault("secrets", (SECRET,))
    return OpenAIStructuredLLM(server.base_url, "fake-chat", API_KEY, 5.0, **options)


def ask(llm: OpenAIStructuredLLM, user: str = "Name the task.") -> tuple[Plan, LLMUsage]:
    return llm.complete(system="You induce workflows.", user=user, output=Plan, max_tokens=300)


def assert_nothing_leaked(requests: list[RecordedRequest]) -> None:
    for request in requests:
        assert API_KEY.encode() not in request.raw_body
        assert SECRET.encode() not in request.raw_body
        assert request.header("Authorization") == f"Bearer {API_KEY}"


# ── the core's helpers ───────────────────────────────────────────────────────────────────────


def test_usage_adds_up() -> None:
    total = LLMUsage(1, 10, 5) + LLMUsage(2, 3, 4)
    assert total == LLMUsage(calls=3, prompt_tokens=13, completion_tokens=9)
    assert total.total_tokens == 22
    assert LLMUsage() == LLMUsage(0, 0, 0)


def test_budget_counts_calls_and_tokens() -> None:
    budget = LLMBudget(max_calls=2, max_tokens=100)
    budget.check()
    budget.record(LLMUsage(1, 40, 10))
    budget.check()
    with pytest.raises(LLMBudgetExceeded, match="100 tokens"):
        budget.check(tokens=51)
    budget.record(LLMUsage(1, 1, 1))
    with pytest.raises(LLMBudgetExceeded, match="2 calls"):
        budget.check()
    assert budget.used == LLMUsage(2, 41, 11)

    spent = LLMBudget(max_tokens=10)
    spent.record(LLMUsage(1, 10, 0))
    with pytest.raises(LLMBudgetExceeded):
        spent.check()
    LLMBudget().check()  # no limits
    with pytest.raises(LLMBudgetExceeded):
        LLMBudget(max_calls=0).check()


def test_redact_masks_every_secret_and_assert_does_not_repeat_it() -> None:
    text = "user bob, password abc123 then abc123456 and x"
    assert redact(text, ["abc123", "abc123456", ""]) == (
        "user bob, password [secret] then [secret] and x"
    )
    assert redact("a-b-a", ["a"]) == "[secret]-b-[secret]"
    assert redact(text, []) == text

    assert_no_secrets(text, ["zzz", ""])
    with pytest.raises(ValueError) as caught:
        assert_no_secrets(text, ["abc123"])
    assert "abc123" not in str(caught.value)


# ── the adapter against the fake server ──────────────────────────────────────────────────────


def test_valid_structured_output(server: FakeOpenAIServer) -> None:
    server.queue_chat(json.dumps(GOOD))
    llm = client(server)

    plan, usage = ask(llm)

    assert plan == Plan.model_validate(GOOD)
    assert usage.calls == 1 and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    (request,) = server.requests_to(CHAT)
    body = request.json
    assert body["model"] == "fake-chat"
    assert body["max_completion_tokens"] == 300
    assert body["messages"] == [
        {"role": "system", "content": "You induce workflows."},
        {"role": "user", "content": "Name the task."},
    ]
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Plan"
    assert response_format["json_schema"]["strict"] is False
    schema = response_format["json_schema"]["schema"]
    assert schema["required"] == ["name", "steps"]
    assert schema["additionalProperties"] is False
    assert "oneOf" not in json.dumps(schema) and "discriminator" not in json.dumps(schema)
    assert "anyOf" in json.dumps(schema)
    assert "kind" in schema["$defs"]["Click"]["required"]  # the tag is always given
    assert request.header("x-stainless-retry-count") == "0"
    assert_nothing_leaked(server.requests)


def test_code_fenced_answer_is_accepted(server: FakeOpenAIServer) -> None:
    server.queue_chat(f"```json\n{json.dumps(GOOD)}\n```")
    plan, usage = ask(client(server))
    assert plan.name == "Log in" and usage.calls == 1


def test_rejected_json_schema_falls_back_to_json_object_and_remembers(
    server: FakeOpenAIServer,
) -> None:
    server.fail_next(400, "response_format type 'json_schema' is not supported", path=CHAT)
    server.queue_chat(json.dumps(GOOD), json.dumps(GOOD))
    llm = client(server)

    plan, usage = ask(llm)
    again, _ = ask(llm)

    assert plan == again == Plan.model_validate(GOOD)
    assert usage.calls == 1  # the rejected request was not answered
    assert llm.uses_json_object
    first, fallback, later = (r.json for r in server.requests_to(CHAT))
    assert first["response_format"]["type"] == "json_schema"
    assert fallback["response_format"] == {"type": "json_object"}
    assert later["response_format"] == {"type": "json_object"}  # no second try of json_schema
    system = fallback["messages"][0]["content"]
    assert system.startswith("You induce workflows.")
    assert "JSON schema" in system and '"steps"' in system
    assert fallback["messages"][1] == {"role": "user", "content": "Name the task."}
    assert_nothing_leaked(server.requests)


def test_422_about_response_format_also_falls_back(server: FakeOpenAIServer) -> None:
    server.fail_next(422, "body.response_format.type: Input should be 'text' or 'json_object'")
    server.queue_chat(json.dumps(GOOD))
    plan, _ = ask(client(server))
    assert plan.name == "Log in"
    assert [r.json["response_format"]["type"] for r in server.requests_to(CHAT)] == [
        "json_schema",
        "json_object",
    ]


def test_other_400_is_an_error_without_fallback(server: FakeOpenAIServer) -> None:
    server.fail_next(400, "messages: too long")
    with pytest.raises(LLMError, match=r"rejected the request \(HTTP 400: messages: too long\)"):
        ask(client(server))
    assert len(server.requests_to(CHAT)) == 1


def test_malformed_json_is_repaired_once(server: FakeOpenAIServer) -> None:
    server.queue_chat('{"name": "Log in", "steps": [', json.dumps(GOOD))

    plan, usage = ask(client(server))

    assert plan == Plan.model_validate(GOOD)
    first, repair = server.requests_to(CHAT)
    assert usage.calls == 2 and usage.prompt_tokens > 0
    messages = repair.json["messages"]
    assert messages[:2] == first.json["messages"]
    assert messages[2] == {"role": "assistant", "content": '{"name": "Log in", "steps": ['}
    assert messages[3]["role"] == "user"
    assert "not valid JSON" in messages[3]["content"]
    assert "corrected JSON only" in messages[3]["content"]
    assert repair.json["response_format"]["type"] == "json_schema"
    assert_nothing_leaked(server.requests)


def test_usage_is_summed_over_the_repair(server: FakeOpenAIServer) -> None:
    def completion(content: str, prompt: int, done: int) -> dict[str, Any]:
        return {
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content},
                 "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": done,
                      "total_tokens": prompt + done},
        }  # fmt: skip

    server.queue_chat(completion("nope", 100, 7), completion(json.dumps(GOOD), 130, 20))
    budget = LLMBudget(max_calls=5)
    _, usage = ask(client(server, budget=budget))
    assert usage == LLMUsage(calls=2, prompt_tokens=230, completion_tokens=27)
    assert budget.used == usage


def test_schema_violation_repair_names_the_field(server: FakeOpenAIServer) -> None:
    bad = {"name": "Log in", "steps": [{"kind": "drag", "target": "x"}]}
    server.queue_chat(json.dumps(bad), json.dumps(GOOD))
    ask(client(server))
    repair = server.requests_to(CHAT)[1].json["messages"][3]["content"]
    assert "steps.0" in repair and "kind" in repair


def test_invalid_twice_is_invalid_output(server: FakeOpenAIServer) -> None:
    server.queue_chat('{"name": 3}', '{"name": "x"}')
    with pytest.raises(LLMInvalidOutput) as caught:
        ask(client(server))
    assert "steps: Field required" in caught.value.problem
    assert "\n" not in str(caught.value)
    assert caught.value.usage.calls == 2
    assert len(server.requests_to(CHAT)) == 2


def test_refusal_is_refused(server: FakeOpenAIServer) -> None:
    server.queue_chat({"content": None, "refusal": "I can't help with that."})
    with pytest.raises(LLMRefused, match="I can't help with that"):
        ask(client(server))
    assert len(server.requests_to(CHAT)) == 1  # no repair of a refusal


def test_content_filter_is_refused(server: FakeOpenAIServer) -> None:
    server.queue_chat(
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": ""},
                    "finish_reason": "content_filter",
                }
            ]
        }
    )
    with pytest.raises(LLMRefused, match="content filter"):
        ask(client(server))


def test_cut_off_answer_is_invalid_output(server: FakeOpenAIServer) -> None:
    server.queue_chat(
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": '{"name": "Lo'},
                    "finish_reason": "length",
                }
            ]
        }
    )
    with pytest.raises(LLMInvalidOutput, match="cut off at max_tokens"):
        ask(client(server))
    assert len(server.requests_to(CHAT)) == 1


def test_timeout_is_unavailable_naming_the_endpoint(server: FakeOpenAIServer) -> None:
    server.set_delay(3.0)
    llm = OpenAIStructuredLLM(server.base_url, "fake-chat", API_KEY, 0.5)
    started = time.monotonic()
    with pytest.raises(LLMUnavailable) as caught:
        ask(llm)
    assert time.monotonic() - started < 2.5  # no retries
    assert server.base_url in str(caught.value)
    assert "0.5 s" in str(caught.value)
    assert len(server.requests_to(CHAT)) == 1


def test_rate_limit_carries_retry_after(server: FakeOpenAIServer) -> None:
    server.fail_next(429, "Rate limit reached", headers={"Retry-After": "7"})
    with pytest.raises(LLMRateLimited) as caught:
        ask(client(server))
    assert caught.value.retry_after == 7.0
    assert "retry after 7 s" in str(caught.value)
    server.fail_next(429, "Rate limit reached")
    with pytest.raises(LLMRateLimited) as caught:
        ask(client(server))
    assert caught.value.retry_after is None
    assert len(server.requests_to(CHAT)) == 2  # the SDK did not retry


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_never_appears_in_the_error(server: FakeOpenAIServer, status: int) -> None:
    server.fail_next(status, f"Incorrect API key provided: {API_KEY}")
    with pytest.raises(LLMUnavailable) as caught:
        ask(client(server))
    text = str(caught.value)
    assert "the API key was refused" in text and f"HTTP {status}" in text
    assert API_KEY not in text and API_KEY not in repr(caught.value.args)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_server_echoing_the_key_in_another_error_is_masked(server: FakeOpenAIServer) -> None:
    server.fail_next(503, f"overloaded for key {API_KEY}\nplease retry")
    with pytest.raises(LLMUnavailable) as caught:
        ask(client(server))
    assert API_KEY not in str(caught.value)
    assert "HTTP 503" in str(caught.value) and "\n" not in str(caught.value)


def test_nothing_listening_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(LLMUnavailable) as caught:
        ask(OpenAIStructuredLLM(url, "fake-chat", API_KEY, 2.0))
    assert url in str(caught.value) and "connection refused" in str(caught.value)


def test_budget_exceeded_before_any_request(server: FakeOpenAIServer) -> None:
    with pytest.raises(LLMBudgetExceeded):
        ask(client(server, budget=LLMBudget(max_calls=0)))
    assert server.requests == []


def test_budget_stops_the_repair(server: FakeOpenAIServer) -> None:
    server.queue_chat("not json", json.dumps(GOOD))
    budget = LLMBudget(max_calls=1)
    with pytest.raises(LLMBudgetExceeded) as caught:
        ask(client(server, budget=budget))
    assert caught.value.usage.calls == 1
    assert budget.used.calls == 1
    assert len(server.requests_to(CHAT)) == 1


@pytest.mark.parametrize("where", ["system", "user"])
def test_secret_in_prompt_fails_before_any_request(server: FakeOpenAIServer, where: str) -> None:
    llm = client(server)
    prompt = {"system": "You induce workflows.", "user": "Name the task."}
    prompt[where] += f" The password is {SECRET}."
    with pytest.raises(ValueError, match="secret") as caught:
        llm.complete(**prompt, output=Plan)
    assert SECRET not in str(caught.value)
    assert server.requests == []


def test_api_key_in_prompt_is_a_secret_too(server: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError):
        ask(client(server, secrets=()), user=f"use {API_KEY}")
    assert server.requests == []


def test_secret_echoed_by_the_model_is_masked_in_the_repair(server: FakeOpenAIServer) -> None:
    server.queue_chat(f"the password is {SECRET}", json.dumps(GOOD))
    plan, _ = ask(client(server))
    assert plan.name == "Log in"
    assert_nothing_leaked(server.requests)
    repair = server.requests_to(CHAT)[1].json["messages"][2]["content"]
    assert repair == "the password is [secret]"


# ── the factory ──────────────────────────────────────────────────────────────────────────────


def test_make_llm(server: FakeOpenAIServer) -> None:
    assert make_llm(None, "gpt-4o-mini", None, 60.0) is None
    assert make_llm("", "gpt-4o-mini", "", 60.0) is None

    openai_default = make_llm(None, "gpt-4o-mini", API_KEY, 60.0)
    assert openai_default is not None
    assert openai_default.endpoint == "https://api.openai.com/v1"
    assert openai_default.budget is None
    assert API_KEY not in repr(openai_default)

    local = make_llm(
        server.base_url, "fake-chat", None, 5.0, max_calls=1, max_tokens=10_000, secrets=[SECRET]
    )
    assert local is not None and local.budget is not None
    server.queue_chat(json.dumps(GOOD))
    plan, _ = ask(local)
    assert plan.name == "Log in"
    assert server.requests_to(CHAT)[0].header("Authorization") == "Bearer no-key"
    with pytest.raises(LLMBudgetExceeded):
        ask(local)
    with pytest.raises(ValueError):
        ask(local, user=SECRET)


def test_endpoint_hides_credentials_in_the_url() -> None:
    llm = OpenAIStructuredLLM("http://me:pw@127.0.0.1:9/v1/", "m", None, 1.0)
    assert llm.endpoint == "http://127.0.0.1:9/v1"
    with pytest.raises(LLMUnavailable) as caught:
        ask(llm)
    assert "pw" not in str(caught.value)
