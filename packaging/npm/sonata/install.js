// npm's postinstall: puts the platform package's binaries in place of bin/sonata (a hard link, or
// a copy where a link cannot be made), with sonata-hook beside it, so that `sonata` starts without
// Node.js and `sonata init` finds the hook binary: a hook runs before every tool call of Claude
// Code. The binary replaces the script only once it has answered --version; on any failure the
// script stays, and it starts the binary itself.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const { binaryPath } = require("./lib/launcher.js");

/// `from` linked (or copied) to a temporary name beside `to`; the temporary path.
function stage(from, to) {
  const staged = `${to}.${process.pid}.tmp`;
  try {
    fs.linkSync(from, staged);
  } catch {
    fs.copyFileSync(from, staged);
    fs.chmodSync(staged, 0o755);
  }
  return staged;
}

function main() {
  const binary = binaryPath();
  if (binary instanceof Error) return `the launcher stays: ${binary.message}`;
  const bin = path.join(__dirname, "bin");
  const script = path.join(bin, "sonata");
  const staged = [];
  try {
    const hook = stage(path.join(path.dirname(binary), "sonata-hook"), path.join(bin, "sonata-hook"));
    staged.push(hook);
    const sonata = stage(binary, script);
    staged.push(sonata);
    const answer = spawnSync(sonata, ["--version"], { encoding: "utf8", timeout: 30000 });
    if (answer.status !== 0 || !/^sonata /.test(answer.stdout)) {
      throw new Error(`${binary} --version answered ${answer.status}: ${answer.stderr || answer.stdout}`);
    }
    fs.renameSync(hook, path.join(bin, "sonata-hook"));
    fs.renameSync(sonata, script);
    return "";
  } catch (error) {
    for (const file of staged) fs.rmSync(file, { force: true });
    return `the launcher stays (${error.message})`;
  }
}

const note = main();
if (note) process.stderr.write(`sonata: ${note}\n`);
