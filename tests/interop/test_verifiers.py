"""webworld from verifiers 0.4: the worlds' environment run by verifiers' own eval runner (what
``vf-eval`` runs: the env loaded by its taskset id, rollouts through verifiers' interception)
against a scripted OpenAI-compatible endpoint on loopback that answers with tool calls. The
oracle's calls (the verified trajectory's actions) get reward 1 and a wrong press 0, each what
webworld's own env gives for the same actions; a refused action comes back to the model as the
env's error and the page; verifiers' turn limit ends a rollout cleanly; a call that cannot be
made, and bad settings, are clear errors, not crashes."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from pathlib import Path

import pytest
import verifiers.v1 as vf
from verifiers.v1.cli.eval.runner import run_eval
from verifiers.v1.configs.cli.eval import EvalConfig

from tests.agents.scripted_llm import Script, create_scripted_app, tool_reply
from webworld.browser.actions import BrowserAction, parse_action
from webworld.data.prompting import TOOL_SYSTEM_PROMPT
from webworld.errors import UsageError
from webworld.interop.trl import WebworldEnv, environment_factory, tools_of, world_folder
from webworld.interop.verifiers import (
    TASKSET_ID,
    WebworldHarnessConfig,
    WebworldTask,
    call_tool,
    environment_config,
    load_environment,
    tool_schemas,
)
from webworld.rl.fast.env import FastEnv
from webworld.serve.runner import LiveServer


def as_call(action: BrowserAction) -> tuple[str, dict[str, str]]:
    """An action of the language as the tool call that makes it."""
    params = list(inspect.signature(getattr(WebworldEnv, action.name)).parameters)[1:]
    return action.name, dict(zip(params, action.args, strict=True))


def verified(worlds: Path) -> dict:
    [path] = (worlds / "trajectories").glob("*/verified.jsonl")
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def test_vf_eval_scores_the_oracle_1_and_a_wrong_press_0(button_board: Path,
                                                          tmp_path: Path) -> None:
    record = verified(button_board)
    oracle = [step["action"] for step in record["steps"]]
    calls = [as_call(parse_action(action)) for action in oracle]
    first_page = record["steps"][0]["observation"]["axtree"]
    wrong = next(b for b in re.findall(r"\[(\d+)\]", first_page) if b != calls[0][1]["element"])
    script = Script()
    script.push(*(tool_reply(call) for call in calls),                      # the oracle
                tool_reply(("click", {"element": wrong})),                      # a wrong press
                tool_reply(("click", {"element": "999"})),                      # refused, then
                *(tool_reply(call) for call in calls),                      # the oracle
                tool_reply(("click", {"element": "999"})), tool_reply(("click", {"element": "998"})))
    with LiveServer(create_scripted_app(script)) as server:
        config = EvalConfig(
            env=environment_config(button_board, max_steps=5, agent={"max_turns": 2}),
            model="scripted-model", num_rollouts=4, max_concurrent=1,  # one after another
            client=vf.EvalClientConfig(base_url=f"{server.url}/v1", api_key_var="WEBWORLD_NO_KEY"),
            rich=None, push=False, output_dir=tmp_path)
        episodes = asyncio.run(run_eval(config))
    traces = [episode.traces[0] for episode in episodes]
    assert all(episode.ok for episode in episodes), [e.errors for e in episodes]
    played = [t.info["webworld"]["actions"] for t in traces]
    assert played == [oracle, [f"click('{wrong}')"], ["click('999')", *oracle],
                      ["click('999')", "click('998')"]]
    assert [t.reward for t in traces] == [1.0, 0.0, 1.0, 0.0]
    assert [t.metrics["success"] for t in traces] == [1.0, 0.0, 1.0, 0.0]
    assert traces[3].stop_condition == "max_turns"  # verifiers' limit, not the env's 5 steps
    assert len(script.requests) == 6  # the third call of the last rollout never went out
    # the rewards are webworld's own env's for the same actions
    instance = traces[0].task.data.instance
    env = FastEnv(world_folder(button_board.resolve()), split=None, build=False,
                  observation="compact")
    for actions, trace in zip(played, traces, strict=True):
        env.reset(seed=0, options={"task": instance})
        assert sum(env.step(action)[1] for action in actions) == trace.reward
    # the model read the task and the page first, webworld's tools, and each tool's page
    intent = traces[0].task.data.intent
    page = environment_factory(button_board)().reset(instance, intent)
    first = script.requests[0]
    assert first["messages"] == [{"role": "system", "content": TOOL_SYSTEM_PROMPT},
                                 {"role": "user", "content": f"Task: {intent}{page}"}]
    assert first["tools"] == tool_schemas(environment_factory(button_board)())
    told = script.requests[3]["messages"][-1]
    assert told["role"] == "tool" and told["content"].startswith("Last action failed: ")
    assert told["content"].endswith(page.strip().split("\n", 2)[-1])  # and the page again
    assert any(isinstance(m, vf.ToolMessage) and m.content == told["content"]
               for m in traces[2].messages)  # verifiers' trace has the exchange too
    [saved] = tmp_path.rglob("traces.jsonl")  # and verifiers' own record of the run
    rewards = [json.loads(line)["traces"][0]["rewards"]["webworld"]["score"]
               for line in saved.read_text().splitlines()]
    assert rewards == [1.0, 0.0, 1.0, 0.0]


def test_the_environment_has_a_row_per_instance_and_webworld_s_tools(button_board: Path) -> None:
    env = load_environment(button_board)
    assert isinstance(env, vf.Env) and env.config.taskset.id == TASKSET_ID
    harness = env.config.agent_harnesses()["agent"]  # the taskset's own harness, by default
    assert vf.harness_config_type(harness.id) is WebworldHarnessConfig
    tasks = list(env.taskset)
    assert all(isinstance(t, WebworldTask) for t in tasks)
    assert [t.data.instance for t in tasks] == [
        i.id for i in world_folder(button_board.resolve()).instances("train")]
    assert tasks[0].data.prompt.startswith("Task: ")
    # the tools are TRL's WebworldEnv's, with their docstrings and arguments
    trl_env = environment_factory(button_board)()
    schemas = {s["function"]["name"]: s["function"] for s in tool_schemas(trl_env)}
    assert list(schemas) == [tool.__name__ for tool in tools_of(trl_env)]
    assert set(schemas) == {"click", "fill", "press", "select_option", "hover", "check",
                            "uncheck", "drag"}
    fill = schemas["fill"]
    assert fill["description"] == "Replace the text of a text field."
    assert fill["parameters"]["required"] == ["element", "text"]
    assert fill["parameters"]["properties"]["text"] == {
        "type": "string", "description": "The text to put in the field."}


def test_a_call_that_cannot_be_made_is_the_model_s_next_input(button_board: Path) -> None:
    env = environment_factory(button_board)()
    env.reset(None)
    for name, arguments, says in (("scroll", '{"element": "1"}', "no tool 'scroll'"),
                                  ("click", '{"element": ', "not JSON"),
                                  ("click", '["1"]', "must be a JSON object"),
                                  ("fill", '{"element": "1"}', "missing a required argument"),
                                  ("click", '{"element": "1", "twice": true}', "unexpected keyword")):
        text = call_tool(env, name, arguments)
        assert text.startswith("Tool call failed: ") and says in text, text
    assert call_tool(env, "press", '{"element": "1", "key": "Tab"}').startswith("Last action failed")
    assert env.played.actions == ["press('1', 'Tab')"]  # only the env's refusal was a step


def test_bad_worlds_or_settings_are_one_line_errors(button_board: Path, tmp_path: Path) -> None:
    for kwargs, says in (({"worlds": tmp_path}, "no sites/ folder"),
                         ({"worlds": button_board, "split": "test"}, "no task instances"),
                         ({"worlds": button_board, "env": "chrome"}, "taskset.env"),
                         ({"worlds": button_board, "max_steps": 0}, "taskset.max_steps")):
        with pytest.raises(UsageError, match=says) as caught:
            load_environment(**kwargs)
        assert "\n" not in str(caught.value)
