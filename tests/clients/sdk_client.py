"""(b) The Python SDK client (PyPI `mcp`) against `mesh-mcp run --standalone`, once per era:
"legacy" (initialize) and "2026-07-28" (modern, stateless with per-request _meta). Connects,
lists the tools, calls every tool and checks the answers for the expected path:line facts in
the facts file and their structuredContent against the tool's outputSchema (the same rules as
facts.mjs), then lists and reads resources, lists the templates, lists and gets prompts and
completes a prompt argument."""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp.types import PromptReference

PROMPTS = ("trace_rpc", "change_impact", "onboard_service")
TEMPLATES = ("mesh://service/{name}", "mesh://rpc/{name}", "mesh://topic/{name}",
             "mesh://route/{name}", "mesh://doc/{name}")


def validate(schema, value, at="$"):
    """The problems of value against a JSON Schema in the subset tests/common/schema.rs checks."""
    def type_ok(t, v):
        return {"object": isinstance(v, dict), "array": isinstance(v, list),
                "string": isinstance(v, str), "boolean": isinstance(v, bool),
                "integer": isinstance(v, int) and not isinstance(v, bool),
                "number": isinstance(v, (int, float)) and not isinstance(v, bool),
                "null": v is None}.get(t, False)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_ok(t, value) for t in types):
            return [f"{at}: expected {types}, got {value!r:.80}"]
    problems = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{at}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        for r in schema.get("required", []):
            if r not in value:
                problems.append(f"{at}: missing required {r}")
        for k, v in value.items():
            if k in schema.get("properties", {}):
                problems += validate(schema["properties"][k], v, f"{at}.{k}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{at}: unexpected {k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            problems += validate(schema["items"], v, f"{at}[{i}]")
    return problems


def check_structured(tool, result):
    if result.is_error:
        return []
    if not tool.output_schema:
        return [f"{tool.name}: tools/list shows no outputSchema"]
    if result.structured_content is None:
        return [f"{tool.name}: no structuredContent"]
    return [f"{tool.name}: structuredContent {p}" for p in validate(tool.output_schema, result.structured_content)]


async def check_features(client, mode, facts):
    """resources/list (every page), templates, reads, prompts/list + get, completion."""
    problems = []
    uris, cursor = [], None
    while True:
        page = await client.list_resources(cursor=cursor)
        uris += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if not cursor:
            break
    for u in ("mesh://mesh", "mesh://status"):
        if u not in uris:
            problems.append(f"resources/list lacks {u}")
    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    if list(templates) != list(TEMPLATES):
        problems.append(f"resources/templates/list: {templates}")
    status = await client.read_resource("mesh://status")
    if "Index status" not in status.contents[0].text:
        problems.append(f"resources/read mesh://status: {status!r:.300}")
    rpc = next((u for u in uris if u.startswith("mesh://rpc/")), None)
    if rpc:
        read = await client.read_resource(rpc)
        if "## gRPC trace" not in read.contents[0].text:
            problems.append(f"resources/read {rpc}: {read!r:.300}")
    prompts = [p.name for p in (await client.list_prompts()).prompts]
    for p in PROMPTS:
        if p not in prompts:
            problems.append(f"prompts/list lacks {p}")
    target = facts.get("default_arguments", {}).get("target", "")
    got = await client.get_prompt("trace_rpc", {"rpc": target})
    if target not in got.messages[0].content.text:
        problems.append(f"prompts/get trace_rpc: {got!r:.300}")
    typed = target[:4]
    done = await client.complete(PromptReference(type="ref/prompt", name="trace_rpc"),
                                 {"name": "rpc", "value": typed})
    if target not in done.completion.values:
        problems.append(f"completion of rpc {typed!r}: {done.completion.values[:5]}")
    print(f"  [{mode}] resources: {len(uris)} listed, {len(templates)} templates; prompts: "
          f"{len(prompts)}; completion {typed!r} -> {', '.join(done.completion.values[:3])}")
    return problems


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
        by_name = {t.name: t for t in tools}
        for call in plan:
            result = await client.call_tool(call["tool"], call["arguments"])
            bad = check_result(call, result) + check_structured(by_name[call["tool"]], result)
            problems += bad
            if not bad:
                note = " (no expected facts in the facts file)" if call["unplanned"] else ""
                print(f"  [{mode}] {call['tool']}: ok{note}")
        problems += await check_features(client, mode, facts)
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
