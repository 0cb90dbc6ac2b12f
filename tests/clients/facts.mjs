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

/**
 * The problems of `value` against a JSON Schema, in the subset mesh-mcp's schemas use (type,
 * properties, required, items, enum, additionalProperties: false, minimum, maximum); the same
 * rules as tests/common/schema.rs.
 */
export function validate(schema, value, at = "$") {
  const problems = [];
  const typeOk = (t, v) =>
    t === "object" ? v !== null && typeof v === "object" && !Array.isArray(v)
      : t === "array" ? Array.isArray(v)
        : t === "integer" ? Number.isInteger(v)
          : t === "null" ? v === null
            : typeof v === t;
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeOk(t, value))) return [`${at}: expected ${types.join("|")}, got ${JSON.stringify(value)}`];
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: above maximum`);
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const r of schema.required ?? []) if (!(r in value)) problems.push(`${at}: missing required ${r}`);
    for (const [k, v] of Object.entries(value)) {
      const p = schema.properties?.[k];
      if (p) problems.push(...validate(p, v, `${at}.${k}`));
      else if (schema.additionalProperties === false) problems.push(`${at}: unexpected ${k}`);
    }
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => problems.push(...validate(schema.items, v, `${at}[${i}]`)));
  return problems;
}

/** The problems of a tool result's structuredContent against the tool's outputSchema. */
export function checkStructured(tool, result) {
  if (result?.isError === true) return [];
  if (!tool.outputSchema) return [`${tool.name}: tools/list shows no outputSchema`];
  if (result?.structuredContent === undefined) return [`${tool.name}: no structuredContent`];
  return validate(tool.outputSchema, result.structuredContent).map((p) => `${tool.name}: structuredContent ${p}`);
}

/** What every client checks of resources, prompts and completions (facts: default_arguments). */
export const FEATURES = {
  fixedResources: ["mesh://mesh", "mesh://status"],
  templates: ["mesh://service/{name}", "mesh://rpc/{name}", "mesh://topic/{name}", "mesh://route/{name}", "mesh://doc/{name}"],
  prompts: ["trace_rpc", "change_impact", "onboard_service"],
};

/** The problems of resources/list, templates/list, a read and prompts/list + get results. */
export function checkFeatures({ resources, templates, status, prompts, prompt }, facts) {
  const problems = [];
  const uris = (resources ?? []).map((r) => r.uri);
  for (const u of FEATURES.fixedResources) if (!uris.includes(u)) problems.push(`resources/list lacks ${u}`);
  const tpl = (templates ?? []).map((t) => t.uriTemplate);
  for (const t of FEATURES.templates) if (!tpl.includes(t)) problems.push(`resources/templates/list lacks ${t}`);
  const text = status?.contents?.[0]?.text ?? "";
  if (!text.includes("Index status")) problems.push(`resources/read mesh://status: ${JSON.stringify(status).slice(0, 300)}`);
  const names = (prompts ?? []).map((p) => p.name);
  for (const p of FEATURES.prompts) if (!names.includes(p)) problems.push(`prompts/list lacks ${p}`);
  const service = facts.default_arguments?.service ?? "";
  const ptext = prompt?.messages?.[0]?.content?.text ?? "";
  if (!ptext.includes(service) || !ptext.includes("visualize_mesh")) {
    problems.push(`prompts/get onboard_service: ${JSON.stringify(prompt).slice(0, 300)}`);
  }
  return problems;
}
