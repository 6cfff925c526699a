// Runs the Khronos glTF validator (npm package gltf-validator, installed in cli/preview by
// .ci/install-deps) on each file given and prints its issues. Exit 0 only when every file has no
// error and no warning (infos and hints are printed, not failed on).
//   node validate.cjs NODE_MODULES FILE.glb|FILE.gltf ...
const fs = require("fs");
const path = require("path");
const [modules, ...files] = process.argv.slice(2);
const validator = require(path.resolve(modules, "gltf-validator"));

async function main() {
  let bad = 0;
  for (const file of files) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
      maxIssues: 50,
      externalResourceFunction: () => Promise.reject(new Error("no external resources")),
    });
    const i = report.issues;
    console.log(`${path.basename(file)}: ${i.numErrors} errors, ${i.numWarnings} warnings, ` +
                `${i.numInfos} infos, ${i.numHints} hints`);
    for (const m of i.messages) {
      console.log(`  [${["error", "warning", "info", "hint"][m.severity]}] ${m.code} ` +
                  `${m.pointer || ""}: ${m.message}`);
    }
    if (i.numErrors > 0 || i.numWarnings > 0) ++bad;
  }
  process.exit(bad ? 1 : 0);
}
main().catch((e) => {
  console.error(e);
  process.exit(2);
});
