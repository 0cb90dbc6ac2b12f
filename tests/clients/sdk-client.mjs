// (b) The TypeScript SDK client (StdioClientTransport): connect (initialize + initialized),
// check serverInfo and capabilities, list the tools, call every tool and check the answers for
// the expected path:line facts and their structuredContent against the tool's outputSchema
// (the SDK validates it too), list and read resources (paging through nextCursor), list the
// templates, list and get prompts, complete a prompt argument, ping, close.
// Usage: node sdk-client.mjs <tools node_modules>
import { createRequire } from "node:module";
import { join } from "node:path";
import { loadFacts, planCalls, checkResult, checkStructured, checkFeatures } from "./facts.mjs";

const require = createRequire(join(process.argv[2], "_"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const { MESH_BIN, MESH_WORKSPACE, MESH_FACTS } = process.env;
const facts = loadFacts(MESH_FACTS);
const problems = [];

const transport = new StdioClientTransport({
  command: MESH_BIN,
  args: ["run", "--standalone"],
  cwd: MESH_WORKSPACE,
  env: { ...process.env },
  stderr: "ignore",
});
const client = new Client({ name: "mesh-mcp-ts-sdk-check", version: "1.0.0" });
await client.connect(transport);

const info = client.getServerVersion();
const caps = client.getServerCapabilities();
if (info?.name !== "mesh-mcp") problems.push(`serverInfo.name is ${info?.name}`);
for (const c of ["tools", "resources", "prompts", "completions"]) {
  if (!caps?.[c]) problems.push(`capabilities lack ${c}: ${JSON.stringify(caps)}`);
}
console.log(`  connected: ${info?.name} ${info?.version}, capabilities ${Object.keys(caps ?? {}).join(", ")}`);

const { tools } = await client.listTools();
console.log(`  tools/list: ${tools.map((t) => t.name).join(", ")}`);
for (const t of tools) {
  if (!t.description) problems.push(`tool ${t.name} has no description`);
  if (t.annotations?.readOnlyHint !== true) problems.push(`tool ${t.name} is not readOnlyHint`);
}
const plan = planCalls(facts, tools);
problems.push(...plan.problems);
for (const call of plan.plan) {
  let result;
  try {
    result = await client.callTool({ name: call.tool, arguments: call.arguments });
  } catch (e) {
    // The SDK validates structuredContent against the outputSchema itself (Ajv) and throws.
    problems.push(`${call.tool}: the SDK refused the answer: ${e.message}`.slice(0, 600));
    continue;
  }
  const bad = checkResult(call, result).concat(checkStructured(tools.find((t) => t.name === call.tool), result));
  problems.push(...bad);
  if (bad.length === 0) {
    console.log(`  ${call.tool}: ok${call.unplanned ? " (no expected facts in the facts file)" : ""}`);
  }
}
// The index first (index_status above waited for it), then every resources/list page.
const resources = [];
let cursor;
do {
  const page = await client.listResources(cursor ? { cursor } : {});
  resources.push(...page.resources);
  cursor = page.nextCursor;
} while (cursor);
const templates = (await client.listResourceTemplates()).resourceTemplates;
const status = await client.readResource({ uri: "mesh://status" });
const prompts = (await client.listPrompts()).prompts;
const service = facts.default_arguments?.service ?? "";
const prompt = await client.getPrompt({ name: "onboard_service", arguments: { service } });
problems.push(...checkFeatures({ resources, templates, status, prompts, prompt }, facts));
// A listed service read through its template says what visualize_mesh says.
const svc = resources.find((r) => r.uri.startsWith("mesh://service/"));
if (svc) {
  const read = await client.readResource({ uri: svc.uri });
  if (!read.contents?.[0]?.text?.includes("## Service mesh")) problems.push(`resources/read ${svc.uri}: ${JSON.stringify(read).slice(0, 300)}`);
} else {
  problems.push("resources/list names no service");
}
const typed = service.split("/").pop().slice(0, 3);
const done = await client.complete({ ref: { type: "ref/prompt", name: "onboard_service" }, argument: { name: "service", value: typed } });
if (!done.completion.values.includes(service)) problems.push(`completion of service "${typed}": ${JSON.stringify(done)}`);
console.log(`  resources: ${resources.length} listed, ${templates.length} templates; prompts: ${prompts.length}; completion "${typed}" → ${done.completion.values.slice(0, 3).join(", ")}`);
await client.ping();
await client.close();

problems.forEach((p) => console.log(`  FAIL ${p}`));
console.log(`  ts-sdk: ${plan.plan.length} tool calls, ${problems.length} problem(s)`);
process.exit(problems.length === 0 ? 0 : 1);
