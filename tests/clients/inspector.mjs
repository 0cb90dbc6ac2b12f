// (a) The MCP Inspector CLI against `mesh-mcp run --standalone`, in the legacy era (initialize),
// the auto era (server/discover probe first) and the modern era (2026-07-28, per-request
// _meta): tools/list with --strict (schema portability), one tools/call per listed tool checked
// against the facts and its structuredContent against the tool's outputSchema, then
// resources/list, resources/templates/list, resources/read, prompts/list and prompts/get.
// Completion is checked by the two SDK scripts only: this Inspector CLI refuses
// `prompts/complete` ("Supported --cli methods: initialize, tools/list, tools/call, resources/…,
// prompts/list, prompts/get, logging/setLevel, …"), though its UI offers completion.
// Each Inspector invocation starts a fresh server and closes its stdin at the end.
import { execFileSync } from "node:child_process";
import { loadFacts, planCalls, checkResult, checkStructured, checkFeatures } from "./facts.mjs";

const { INSPECTOR, MESH_BIN, MESH_WORKSPACE, MESH_FACTS } = process.env;
const facts = loadFacts(MESH_FACTS);
let failures = 0;
let calls = 0;

function inspector(era, args) {
  const argv = ["--cli", MESH_BIN, "run", "--standalone", "--", "--protocol-era", era,
    "--cwd", MESH_WORKSPACE, "--format", "json", "-q", ...args];
  try {
    const out = execFileSync(INSPECTOR, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
    return { code: 0, json: JSON.parse(out) };
  } catch (e) {
    return { code: e.status ?? -1, stderr: String(e.stderr ?? e.message), stdout: String(e.stdout ?? "") };
  }
}

function fail(msg) {
  failures += 1;
  console.log(`  FAIL ${msg}`);
}

for (const era of ["legacy", "auto", "modern"]) {
  const list = inspector(era, ["--method", "tools/list", "--strict"]);
  if (list.code !== 0) {
    fail(`[${era}] tools/list --strict exited ${list.code}: ${list.stderr}${list.stdout}`);
    continue;
  }
  const tools = list.json.result?.tools ?? [];
  console.log(`  [${era}] tools/list: ${tools.length} tools, --strict clean`);
  const { plan, problems } = planCalls(facts, tools);
  problems.forEach((p) => fail(`[${era}] ${p}`));
  for (const call of plan) {
    calls += 1;
    const r = inspector(era, ["--method", "tools/call", "--tool-name", call.tool,
      "--tool-args-json", JSON.stringify(call.arguments)]);
    // Exit 5 is the Inspector's "the tool answered isError"; the result is still checked.
    if (r.code !== 0 && !(r.code === 5 && call.isError !== false)) {
      fail(`[${era}] tools/call ${call.tool} exited ${r.code}: ${r.stderr}${r.stdout}`);
      continue;
    }
    const result = r.json?.result ?? (r.stdout ? JSON.parse(r.stdout).result : undefined);
    const bad = checkResult(call, result).concat(checkStructured(tools.find((t) => t.name === call.tool), result));
    bad.forEach((p) => fail(`[${era}] ${p}`));
    if (bad.length === 0) {
      console.log(`  [${era}] ${call.tool}: ok${call.unplanned ? " (no expected facts in the facts file)" : ""}`);
    }
  }
  const get = (args) => {
    const r = inspector(era, args);
    if (r.code !== 0) fail(`[${era}] ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.json?.result;
  };
  const service = facts.default_arguments?.service ?? "";
  const seen = {
    resources: get(["--method", "resources/list"])?.resources,
    templates: get(["--method", "resources/templates/list"])?.resourceTemplates,
    status: get(["--method", "resources/read", "--uri", "mesh://status"]),
    prompts: get(["--method", "prompts/list"])?.prompts,
    prompt: get(["--method", "prompts/get", "--prompt-name", "onboard_service", "--prompt-args", `service=${service}`]),
  };
  const bad = checkFeatures(seen, facts);
  bad.forEach((p) => fail(`[${era}] ${p}`));
  if (bad.length === 0) {
    console.log(`  [${era}] resources (${seen.resources.length} listed, ${seen.templates.length} templates), read, prompts (${seen.prompts.length}), prompts/get: ok`);
  }
}
console.log(`  inspector: ${calls} tool calls over 3 eras, ${failures} problem(s)`);
process.exit(failures === 0 ? 0 : 1);
