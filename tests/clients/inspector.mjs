// (a) The MCP Inspector CLI against `mesh-mcp run --standalone`, in the legacy era (initialize),
// the auto era (server/discover probe first) and the modern era (2026-07-28, per-request
// _meta): tools/list with --strict (schema portability), one tools/call per listed tool checked
// against the facts and its structuredContent against the tool's outputSchema, then
// resources/list, resources/templates/list, resources/read, prompts/list and prompts/get.
// Each `mcp-inspector --cli` invocation starts a fresh server and closes its stdin at the end.
//
// Completion: `mcp-inspector --cli` (2.12.0) refuses `--method prompts/complete` ("Unsupported
// method": it is not one of the CLI's one-shot methods, although the CLI's own code has a
// handler for it). The same pinned package ships the Inspector's connection CLI, `mcpdo`,
// whose `prompts/complete` sends `completion/complete`: it completes a prompt argument and a
// resource-template variable here, in the same three eras, on a private mcpdo daemon that is
// stopped at the end.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadFacts, planCalls, checkResult, checkStructured, checkFeatures } from "./facts.mjs";

const { INSPECTOR, MCPDO, MESH_BIN, MESH_WORKSPACE, MESH_FACTS } = process.env;
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
// mcpdo: a private daemon (its own socket and token), a catalog with one entry for the server,
// one connection per era.
const mcpdoEnv = { ...process.env, MCP_INSPECTOR_SECRET_STORE: "memory" };
function mcpdo(args) {
  try {
    const out = execFileSync(MCPDO, ["--format", "json", ...args], {
      encoding: "utf8", env: mcpdoEnv, stdio: ["ignore", "pipe", "pipe"], timeout: 60_000,
    });
    return { code: 0, json: out.trim() ? JSON.parse(out) : null };
  } catch (e) {
    return { code: e.status ?? -1, stderr: String(e.stderr ?? e.message), stdout: String(e.stdout ?? "") };
  }
}
for (const line of execFileSync(MCPDO, ["private"], { encoding: "utf8", env: mcpdoEnv }).split("\n")) {
  const m = line.match(/^export (\w+)='(.*)'$/);
  if (m) mcpdoEnv[m[1]] = m[2];
}
const catalogDir = join(process.env.MCP_STORAGE_DIR ?? ".", "mcpdo");
mkdirSync(catalogDir, { recursive: true });
mcpdoEnv.MCP_CATALOG_PATH = join(catalogDir, "mcp.json");
const serverEnv = Object.fromEntries(["HOME", "MESH_AUDIT_DB", "MESH_SOCKET_PATH"]
  .filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
writeFileSync(mcpdoEnv.MCP_CATALOG_PATH, JSON.stringify({ mcpServers: { mesh: {
  command: MESH_BIN, args: ["run", "--standalone"], cwd: MESH_WORKSPACE, env: serverEnv,
} } }));
const rpc = facts.default_arguments?.target ?? "";
const service = facts.default_arguments?.service ?? "";
try {
  for (const era of ["legacy", "auto", "modern"]) {
    const conn = mcpdo(["connect", "--era", era, "mesh"]);
    if (conn.code !== 0) {
      fail(`[${era}] mcpdo connect exited ${conn.code}: ${conn.stderr}${conn.stdout}`);
      continue;
    }
    const shown = mcpdo(["@mesh", "connections/show"]);
    const negotiated = shown.json?.protocolEra;
    if (negotiated !== (era === "legacy" ? "legacy" : "modern")) {
      fail(`[${era}] mcpdo negotiated the ${negotiated} era: ${JSON.stringify(shown.json).slice(0, 300)}`);
    }
    const asks = [
      ["ref/prompt", "trace_rpc", "rpc", rpc.slice(0, 4), rpc],
      ["ref/resource", "mesh://service/{name}", "name", service.split("/").pop().slice(0, 3), service],
    ];
    const got = [];
    for (const [type, ref, arg, typed, want] of asks) {
      const r = mcpdo(["@mesh", "prompts/complete", "--complete-ref-type", type, "--complete-ref", ref,
        "--complete-arg-name", arg, "--complete-arg-value", typed]);
      const values = r.json?.values ?? [];
      if (r.code !== 0 || !values.includes(want)) {
        fail(`[${era}] mcpdo prompts/complete ${ref} ${arg}="${typed}" (exit ${r.code}) lacks ${want}: ${JSON.stringify(r.json ?? r.stderr).slice(0, 300)}`);
      }
      got.push(`${arg} "${typed}" → ${values.slice(0, 3).join(", ")}`);
    }
    mcpdo(["disconnect", "mesh"]);
    console.log(`  [${era}] mcpdo completion/complete (${negotiated} era): ${got.join("; ")}`);
  }
} finally {
  mcpdo(["daemon", "stop"]);
}
console.log(`  inspector: ${calls} tool calls over 3 eras, ${failures} problem(s)`);
process.exit(failures === 0 ? 0 : 1);
