#!/usr/bin/env node
// The obvious hand-written alternative to `sonata hook`, kept for the hook benchmark: the same rules
// (safe session id, absolute existing cwd, nearest project's .sonata/ else the machine config dir,
// folded mode, temporary file + rename) in plain Node.js with no dependencies.
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const LIMIT = 1 << 20;
const FOLD = {
  plan: 'plan', default: 'default', acceptEdits: 'acceptEdits', bypassPermissions: 'bypassPermissions',
  auto: 'acceptEdits', dontAsk: 'plan',
};

function kind(p) {
  try {
    const st = fs.lstatSync(p);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch {
    return 'none';
  }
}

function stateDir(project) {
  const state = path.join(project, '.sonata');
  const k = kind(state);
  if (k === 'none') fs.mkdirSync(state, { mode: 0o755 });
  else if (k !== 'dir') return null;
  return state;
}

function targetDir(cwd) {
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (kind(path.join(dir, 'sonata.toml')) === 'file' || kind(path.join(dir, '.sonata')) === 'dir') {
      return stateDir(dir);
    }
    if (dir === path.dirname(dir)) break;
  }
  const config = process.env.XDG_CONFIG_HOME || path.join(process.env.HOME || '/', '.config');
  const machine = path.join(config, 'sonata');
  return kind(path.join(machine, 'config.toml')) === 'file' ? machine : null;
}

function main() {
  const input = fs.readFileSync(0);
  if (input.length > LIMIT) return;
  const doc = JSON.parse(input.toString('utf8'));
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return;
  const { session_id: id, cwd, permission_mode: raw } = doc;
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(id)) return;
  if (typeof cwd !== 'string' || !path.isAbsolute(cwd) || cwd.includes('\0')) return;
  if (raw !== undefined && typeof raw !== 'string') return;
  const real = fs.realpathSync(cwd);
  if (kind(real) !== 'dir') return;
  const dir = targetDir(real);
  if (!dir) return;
  const name = `session-${id}.json`;
  const record = {
    session_id: id,
    mode: FOLD[raw] || 'default',
    updated_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
  const tmp = path.join(dir, `.${name}.tmp-${crypto.randomBytes(8).toString('hex')}`);
  fs.writeFileSync(tmp, JSON.stringify(record) + '\n', { flag: 'wx', mode: 0o644 });
  fs.renameSync(tmp, path.join(dir, name));
}

try {
  main();
} catch {
  // Like sonata's hook: never fail the tool call.
}
process.exitCode = 0;
