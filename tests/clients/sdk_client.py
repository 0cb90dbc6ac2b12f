"""(b) The Python SDK client (PyPI `mcp`) against `mesh-mcp run --standalone`, once per era:
"legacy" (initialize) and "2026-07-28" (modern, stateless with per-request _meta). Connects,
lists the tools, calls every tool and checks the answers for the expected path:line facts in
the facts file (the same rules as facts.mjs)."""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


def plan_calls(facts, tools):
    problems = []
    listed = {t.name: t for t in tools}
    plan = []
    for call in facts["calls"]:
        if call["tool"] not in listed:
            problems.append(f"facts name tool {call['tool']}, which tools/list does not show")
            continue
        plan.append({"tool": call["tool"], "arguments": call.get("arguments", {}),
                     "expect": call.get("expect", []), "is_error": call.get("is_error", False),
                     "unplanned": False})
    named = {c["tool"] for c in facts["calls"]}
    for t in tools:
        if t.name in named:
            continue
        args = {}
        for name in (t.input_schema or {}).get("required", []):
            if name not in facts.get("default_arguments", {}):
                problems.append(f'tool {t.name} requires "{name}": add an entry for it to the facts file')
            args[name] = facts.get("default_arguments", {}).get(name)
        plan.append({"tool": t.name, "arguments": args, "expect": [], "is_error": None,
                     "unplanned": True})
    return plan, problems


def check_result(call, result):
    texts = [c.text for c in (result.content or []) if getattr(c, "type", None) == "text"]
    text = "\n".join(texts)
    if not text:
        return [f"{call['tool']}: no text content in {result!r:.300}"]
    problems = []
    if call["is_error"] is not None and bool(result.is_error) != call["is_error"]:
        problems.append(f"{call['tool']}: isError is {result.is_error}, expected {call['is_error']}: {text[:300]}")
    for fact in call["expect"]:
        if fact not in text:
            problems.append(f"{call['tool']}: answer lacks {fact!r}: {text[:400]}")
    return problems


async def check_era(mode, facts):
    params = StdioServerParameters(
        command=os.environ["MESH_BIN"], args=["run", "--standalone"],
        cwd=os.environ["MESH_WORKSPACE"], env=dict(os.environ))
    problems = []
    async with Client(params, mode=mode) as client:
        listed = await client.list_tools()
        tools = listed.tools
        print(f"  [{mode}] tools/list: {', '.join(t.name for t in tools)}")
        plan, plan_problems = plan_calls(facts, tools)
        problems += plan_problems
        for call in plan:
            result = await client.call_tool(call["tool"], call["arguments"])
            bad = check_result(call, result)
            problems += bad
            if not bad:
                note = " (no expected facts in the facts file)" if call["unplanned"] else ""
                print(f"  [{mode}] {call['tool']}: ok{note}")
    return len(plan), [f"[{mode}] {p}" for p in problems]


async def main():
    with open(os.environ["MESH_FACTS"], encoding="utf-8") as f:
        facts = json.load(f)
    calls, problems = 0, []
    for mode in ("legacy", "2026-07-28"):
        n, p = await check_era(mode, facts)
        calls += n
        problems += p
    for p in problems:
        print(f"  FAIL {p}")
    print(f"  py-sdk: {calls} tool calls over 2 eras, {len(problems)} problem(s)")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
