// (b) The TypeScript SDK client (StdioClientTransport): connect (initialize + initialized),
// check serverInfo and capabilities, list the tools, call every tool and check the answers for
// the expected path:line facts, ping, close. Usage: node sdk-client.mjs <tools node_modules>
import { createRequire } from "node:module";
import { join } from "node:path";
import { loadFacts, planCalls, checkResult } from "./facts.mjs";

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
if (!caps?.tools) problems.push(`capabilities lack tools: ${JSON.stringify(caps)}`);
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
  const result = await client.callTool({ name: call.tool, arguments: call.arguments });
  const bad = checkResult(call, result);
  problems.push(...bad);
  if (bad.length === 0) {
    console.log(`  ${call.tool}: ok${call.unplanned ? " (no expected facts in the facts file)" : ""}`);
  }
}
await client.ping();
await client.close();

problems.forEach((p) => console.log(`  FAIL ${p}`));
console.log(`  ts-sdk: ${plan.plan.length} tool calls, ${problems.length} problem(s)`);
process.exit(problems.length === 0 ? 0 : 1);
