"""(b) The Python SDK client (PyPI `mcp`) against `mesh-mcp run --standalone`, once per era:
"legacy" (initialize) and "2026-07-28" (modern, stateless with per-request _meta). Connects,
lists the tools, calls every tool and checks the answers for the expected path:line facts in
the facts file and their structuredContent against the tool's outputSchema (the same rules as
facts.mjs), then lists and reads resources, lists the templates, lists and gets prompts and
completes a prompt argument."""

import asyncio
import json
import os
import re
import sys

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from mcp import Client, StdioServerParameters
from mcp.types import PromptReference

PROMPTS = ("trace_rpc", "change_impact", "onboard_service")
TEMPLATES = ("mesh://service/{name}", "mesh://rpc/{name}", "mesh://topic/{name}",
             "mesh://route/{name}", "mesh://doc/{name}")


def validate(schema, value):
    """The problems of value against the JSON Schema `schema`: the `jsonschema` package (pinned
    in requirements.txt) in its 2020-12 mode, the dialect MCP 2025-11-25 assumes when a schema
    names no `$schema`; the schema itself is checked against the meta-schema first."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as e:
        return [f"the schema itself is not valid JSON Schema 2020-12: {e.message}"]
    return [f"{e.json_path}: {e.message}" for e in Draft202012Validator(schema).iter_errors(value)]


def broken_copies(data):
    """Values that must NOT validate, made from a conforming answer (as in facts.mjs): the check
    proves on every run that it can fail."""
    no_total = {k: v for k, v in data.items() if k != "total"}
    return [{**data, "total": "many"}, no_total, {**data, "rows": [{"line": 1}]},
            {**data, "rows": [{"path": "a", "line": "7"}]}]


def check_structured(tool, result):
    if result.is_error:
        return []
    if not tool.output_schema:
        return [f"{tool.name}: tools/list shows no outputSchema"]
    data = result.structured_content
    if data is None:
        return [f"{tool.name}: no structuredContent"]
    problems = [f"{tool.name}: structuredContent {p}" for p in validate(tool.output_schema, data)]
    for bad in broken_copies(data):
        if not validate(tool.output_schema, bad):
            problems.append(f"{tool.name}: the schema check accepts a broken answer {bad!r:.200}")
    return problems


def check_same_facts(call, text, data):
    """The structured answer carries the facts of the text (the rules of checkSameFacts in
    facts.mjs): expect_rows match rows, expect_data members are equal, rows' path:line are in
    the text (but in visualize_mesh's diagram), no more rows than total, nextOffset is the
    offset the text names."""
    if data is None:
        return []
    problems = []
    rows = data.get("rows") if isinstance(data.get("rows"), list) else []
    for want in call["expect_rows"]:
        if not any(all(r.get(k) == v for k, v in want.items()) for r in rows):
            problems.append(f"{call['tool']}: no structuredContent row matches {want}")
    for k, v in call["expect_data"].items():
        if data.get(k) != v:
            problems.append(f"{call['tool']}: structuredContent.{k} is {data.get(k)!r}, expected {v!r}")
    diagram = call["tool"] == "visualize_mesh" and call["arguments"].get("format", "mermaid") != "json"
    if not diagram:
        for r in rows:
            if isinstance(r.get("line"), int) and f"{r['path']}:{r['line']}" not in text:
                problems.append(f"{call['tool']}: row {r['path']}:{r['line']} is not in the text")
    total = data.get("total")
    if not isinstance(total, int) or (len(rows) > total and call["tool"] != "index_status"):
        problems.append(f"{call['tool']}: {len(rows)} rows but total {total}")
    nxt = data.get("nextOffset")
    if nxt is not None and not re.search(rf'"?offset"?:\s*{nxt}\b', text):
        problems.append(f"{call['tool']}: nextOffset {nxt} is not the offset the text names for the next page")
    return problems


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
                     "expect": call.get("expect", []), "expect_rows": call.get("expect_rows", []),
                     "expect_data": call.get("expect_data", {}),
                     "is_error": call.get("is_error", False), "unplanned": False})
    named = {c["tool"] for c in facts["calls"]}
    for t in tools:
        if t.name in named:
            continue
        args = {}
        for name in (t.input_schema or {}).get("required", []):
            if name not in facts.get("default_arguments", {}):
                problems.append(f'tool {t.name} requires "{name}": add an entry for it to the facts file')
            args[name] = facts.get("default_arguments", {}).get(name)
        plan.append({"tool": t.name, "arguments": args, "expect": [], "expect_rows": [],
                     "expect_data": {}, "is_error": None, "unplanned": True})
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
    if not result.is_error:
        problems += check_same_facts(call, text, result.structured_content)
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
            try:
                result = await client.call_tool(call["tool"], call["arguments"])
            except Exception as e:  # the SDK validates structuredContent itself and raises
                problems.append(f"{call['tool']}: the SDK refused the answer: {e!s:.600}")
                continue
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
