// The expected facts shared by the Node clients: which calls to make and what their answers
// must contain. tests/clients/sdk_client.py implements the same rules for Python.
import { readFileSync } from "node:fs";

/** Reads a facts file (see facts/polyglot-shop.json for the format). */
export function loadFacts(path) {
  const facts = JSON.parse(readFileSync(path, "utf8"));
  if (!Array.isArray(facts.calls)) throw new Error(`${path}: "calls" must be an array`);
  return facts;
}

/**
 * One call per listed tool: the facts file's entries first (every entry must name a listed
 * tool), then every other listed tool with its required string arguments filled from
 * default_arguments and no expected text.
 */
export function planCalls(facts, tools) {
  const problems = [];
  const listed = new Map(tools.map((t) => [t.name, t]));
  const plan = [];
  for (const call of facts.calls) {
    if (!listed.has(call.tool)) {
      problems.push(`facts name tool ${call.tool}, which tools/list does not show`);
      continue;
    }
    plan.push({ tool: call.tool, arguments: call.arguments ?? {}, expect: call.expect ?? [], isError: call.is_error === true });
  }
  for (const t of tools) {
    if (facts.calls.some((c) => c.tool === t.name)) continue;
    const args = {};
    for (const name of t.inputSchema?.required ?? []) {
      const value = facts.default_arguments?.[name];
      if (value === undefined) {
        problems.push(`tool ${t.name} requires "${name}": add an entry for it to the facts file`);
      }
      args[name] = value;
    }
    plan.push({ tool: t.name, arguments: args, expect: [], isError: null, unplanned: true });
  }
  return { plan, problems };
}

/** The problems with one tools/call result (empty when it is what the facts expect). */
export function checkResult(call, result) {
  const problems = [];
  const text = (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  if (!Array.isArray(result?.content) || text.length === 0) {
    problems.push(`${call.tool}: no text content in ${JSON.stringify(result).slice(0, 300)}`);
    return problems;
  }
  const isError = result.isError === true;
  if (call.isError !== null && isError !== call.isError) {
    problems.push(`${call.tool}: isError is ${isError}, expected ${call.isError}: ${text.slice(0, 300)}`);
  }
  for (const fact of call.expect) {
    if (!text.includes(fact)) problems.push(`${call.tool}: answer lacks "${fact}": ${text.slice(0, 400)}`);
  }
  return problems;
}
