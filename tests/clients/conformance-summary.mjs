// Counts the conformance results in an output directory: scenarios and checks passed/total.
// Usage: node conformance-summary.mjs <results dir>
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
let scenarios = 0, scenariosPassed = 0, checks = 0, checksPassed = 0;
for (const entry of readdirSync(dir)) {
  let list;
  try {
    list = JSON.parse(readFileSync(join(dir, entry, "checks.json"), "utf8"));
  } catch {
    continue;
  }
  scenarios += 1;
  const failed = list.filter((c) => c.status === "FAILURE").length;
  checks += list.length;
  checksPassed += list.filter((c) => c.status === "SUCCESS").length;
  if (failed === 0 && list.length > 0) scenariosPassed += 1;
}
console.log(`  conformance: scenarios passed ${scenariosPassed}/${scenarios}, checks passed ${checksPassed}/${checks}`);
