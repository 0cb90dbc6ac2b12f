// The expected facts shared by the Node clients: which calls to make and what their answers
// must contain. tests/clients/sdk_client.py implements the same rules for Python.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

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
    plan.push({
      tool: call.tool,
      arguments: call.arguments ?? {},
      expect: call.expect ?? [],
      expectRows: call.expect_rows ?? [],
      expectData: call.expect_data ?? {},
      isError: call.is_error === true,
    });
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
    plan.push({ tool: t.name, arguments: args, expect: [], expectRows: [], expectData: {}, isError: null, unplanned: true });
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
  if (!isError) problems.push(...checkSameFacts(call, text, result.structuredContent));
  return problems;
}

/**
 * The structured answer carries the facts of the text: each `expect_rows` entry of the facts
 * file matches a row (every member it names is equal), each `expect_data` member is equal,
 * every row's `path:line` is in the Markdown (but in visualize_mesh's diagram, which draws
 * links without their sites), there are no more rows than `total`, and a `nextOffset` is the
 * offset the text names for the next call.
 */
export function checkSameFacts(call, text, data) {
  if (data === undefined) return []; // checkStructured says so
  const problems = [];
  const rows = Array.isArray(data?.rows) ? data.rows : [];
  for (const want of call.expectRows) {
    const hit = rows.some((r) => Object.entries(want).every(([k, v]) => r[k] === v));
    if (!hit) problems.push(`${call.tool}: no structuredContent row matches ${JSON.stringify(want)}`);
  }
  for (const [k, v] of Object.entries(call.expectData)) {
    if (JSON.stringify(data?.[k]) !== JSON.stringify(v)) {
      problems.push(`${call.tool}: structuredContent.${k} is ${JSON.stringify(data?.[k])}, expected ${JSON.stringify(v)}`);
    }
  }
  const diagram = call.tool === "visualize_mesh" && (call.arguments.format ?? "mermaid") !== "json";
  if (!diagram) {
    for (const r of rows) {
      if (typeof r.line === "number" && !text.includes(`${r.path}:${r.line}`)) {
        problems.push(`${call.tool}: row ${r.path}:${r.line} is not in the text`);
      }
    }
  }
  if (typeof data.total !== "number" || (rows.length > data.total && call.tool !== "index_status")) {
    problems.push(`${call.tool}: ${rows.length} rows but total ${data.total}`);
  }
  if (data.nextOffset !== undefined && !new RegExp(`"?offset"?:\\s*${data.nextOffset}\\b`).test(text)) {
    problems.push(`${call.tool}: nextOffset ${data.nextOffset} is not the offset the text names for the next page`);
  }
  return problems;
}

// A real JSON Schema validator, not a subset of our own: Ajv 8 in its JSON Schema 2020-12 mode
// (the dialect MCP 2025-11-25 assumes when a schema names no `$schema`), strict, so a schema
// keyword Ajv does not know is an error too. Loaded from the pinned clients' node_modules
// (MESH_NODE_MODULES, set by run.sh).
const requireTools = createRequire(join(process.env.MESH_NODE_MODULES ?? ".", "_"));
const Ajv2020 = requireTools("ajv/dist/2020").default;
const ajv = new Ajv2020({ strict: true, allErrors: true });
const compiled = new Map();

/** The compiled validator of a schema (compiling checks the schema against the meta-schema). */
function validatorOf(schema) {
  const key = JSON.stringify(schema);
  if (!compiled.has(key)) compiled.set(key, ajv.compile(schema));
  return compiled.get(key);
}

/** The problems of `value` against the JSON Schema `schema` (empty when it conforms). */
export function validate(schema, value) {
  let check;
  try {
    check = validatorOf(schema);
  } catch (e) {
    return [`the schema itself is not valid JSON Schema 2020-12: ${e.message}`];
  }
  if (check(value)) return [];
  return check.errors.map((e) => `${e.instancePath || "$"} ${e.message} ${JSON.stringify(e.params)}`);
}

/**
 * Values that must NOT validate, made from a conforming `data`: the check proves on every run
 * that it can fail (a validator that accepts anything would pass every answer).
 */
function brokenCopies(data) {
  const copies = [{ ...data, total: "many" }];
  const { total: _dropped, ...noTotal } = data;
  copies.push(noTotal);
  copies.push({ ...data, rows: [{ line: 1 }] }); // a row without its path
  copies.push({ ...data, rows: [{ path: "a", line: "7" }] }); // a line that is not an integer
  return copies;
}

/**
 * The problems of a tool result's structuredContent against the tool's outputSchema, plus the
 * negative control (each broken copy must fail).
 */
export function checkStructured(tool, result) {
  if (result?.isError === true) return [];
  if (!tool.outputSchema) return [`${tool.name}: tools/list shows no outputSchema`];
  const data = result?.structuredContent;
  if (data === undefined) return [`${tool.name}: no structuredContent`];
  const problems = validate(tool.outputSchema, data).map((p) => `${tool.name}: structuredContent ${p}`);
  for (const bad of brokenCopies(data)) {
    if (validate(tool.outputSchema, bad).length === 0) {
      problems.push(`${tool.name}: the schema check accepts a broken answer ${JSON.stringify(bad).slice(0, 200)}`);
    }
  }
  return problems;
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
