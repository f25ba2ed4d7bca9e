// What the npm package's `sonata` command does when it is this script rather than the binary
// itself (install.js puts the binary in its place when it can): find the native binary in the
// platform package npm installed beside this one (@sonata-cli/sonata-<os>-<cpu>) and run it with
// this command's arguments, standard streams and environment. It exits as the binary exits, and
// a signal sent to it is passed on.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const targets = ["linux-x64", "linux-arm64"];

/// The path of the native binary, or an Error saying why there is none.
function binaryPath() {
  const target = `${process.platform}-${process.arch}`;
  if (!targets.includes(target)) {
    return new Error(
      `no sonata binary for ${target}: the npm packages carry ${targets.join(" and ")}; ` +
        "on another system, build sonata from source"
    );
  }
  const platformPackage = `@sonata-cli/sonata-${target}`;
  try {
    return path.join(path.dirname(require.resolve(`${platformPackage}/package.json`)), "bin", "sonata");
  } catch {
    return new Error(
      `${platformPackage} is not installed: npm skipped it (an install with --omit=optional or ` +
        "--no-optional?); reinstall with: npm install -g @sonata-cli/sonata"
    );
  }
}

function fail(message) {
  process.stderr.write(`sonata: ${message}\n`);
  process.exit(1);
}

function run() {
  const binary = binaryPath();
  if (binary instanceof Error) fail(binary.message);
  const env = { ...process.env };
  if (!env.SONATA_MARKETPLACE_DIR) env.SONATA_MARKETPLACE_DIR = path.join(__dirname, "..");
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", env });
  const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
  for (const signal of forwarded) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  child.on("error", (error) => fail(`cannot run ${binary}: ${error.message}`));
  child.on("exit", (code, signal) => {
    if (signal) {
      for (const s of forwarded) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

module.exports = { binaryPath, run };
