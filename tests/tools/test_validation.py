"""Malformed arguments become error results the model can read; the tool never runs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from desktop.tools.base import ToolContext, run_tool
from desktop.tools.registry import default_tools, tool_specs

TOOLS = default_tools()


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("write", '{"path": "a.txt", "content": ', "not valid JSON"),
        ("write", "[1, 2]", "arguments must be an object"),
        ("write", '{"path": "a.txt"}', "arguments.content is required"),
        ("write", '{"path": 5, "content": "x"}', "arguments.path must be a string"),
        ("write", '{"path": "a.txt", "content": "x", "mode": 7}', "arguments.mode is not a known"),
        ("write", '{"path": "", "content": "x"}', "arguments.path must not be empty"),
        ("read", '{"path": "a.txt", "offset": 0}', "arguments.offset must be at least 1"),
        ("read", '{"path": "a.txt", "limit": true}', "arguments.limit must be an integer"),
        ("read", '{"path": "a.txt", "offset": 1.5}', "arguments.offset must be an integer"),
        ("edit", '{"path": "a.txt", "old": "", "new": "x"}', "arguments.old must not be empty"),
        ("edit", '{"path": "a.txt", "old": "a", "new": "b", "all": "yes"}', "must be a boolean"),
        ("glob", "{}", "arguments.pattern is required"),
        ("grep", '{"pattern": ["x"]}', "arguments.pattern must be a string"),
    ],
)
async def test_malformed_arguments_are_an_error_result_and_nothing_runs(
    ctx: ToolContext, workspace: Path, name: str, arguments: str, says: str
) -> None:
    result = await run_tool(TOOLS[name], arguments, ctx)
    assert result.error
    assert result.output.startswith(f"Invalid arguments for {name}: ")
    assert says in result.output
    assert os.listdir(workspace) == []


async def test_empty_argument_text_counts_as_an_empty_object(ctx: ToolContext) -> None:
    result = await run_tool(TOOLS["glob"], "", ctx)
    assert result.error
    assert "pattern is required" in result.output


async def test_arguments_may_come_already_decoded(ctx: ToolContext, workspace: Path) -> None:
    result = await run_tool(TOOLS["write"], {"path": "a.txt", "content": "hi"}, ctx)
    assert not result.error
    assert (workspace / "a.txt").read_text() == "hi"


def test_every_tool_has_a_valid_name_and_an_object_schema_for_the_model() -> None:
    specs = tool_specs(TOOLS)
    assert [s["name"] for s in specs] == ["edit", "glob", "grep", "read", "write"]
    for spec in specs:
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", spec["name"])
        assert spec["description"]
        params: dict[str, Any] = spec["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        json.dumps(spec)  # sendable as is
