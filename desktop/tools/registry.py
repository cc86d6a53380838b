"""The agent tools that stand alone, by name, and their definitions for the model."""

from __future__ import annotations

from typing import Any

from desktop.tools.base import Tool
from desktop.tools.files import EditTool, ReadTool, WriteTool
from desktop.tools.search import GlobTool, GrepTool


def default_tools() -> dict[str, Tool]:
    tools: list[Tool] = [ReadTool(), WriteTool(), EditTool(), GlobTool(), GrepTool()]
    return {tool.name: tool for tool in tools}


def tool_specs(tools: dict[str, Tool]) -> list[dict[str, Any]]:
    """`{name, description, parameters}` per tool, in a stable order."""
    return [tools[name].spec() for name in sorted(tools)]
