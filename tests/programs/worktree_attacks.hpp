// Attacks of the stand-in harness on its own git worktree, run in the worktree (its working
// directory), for the tests that hold sonata to trusting nothing a run wrote there:
//   wt-gitfile-filter   rewrites .git (a file write) to name a git directory it wrote, whose
//                       config defines clean, smudge and process filters (and an fsmonitor), and a
//                       .gitattributes that applies them to every file
//   wt-gitfile-include  the same, with the filters in a file the planted config includes
//   wt-gitdir-own       (with a shell) replaces the .git file by a .git directory of its own
//                       holding those filters
//   wt-empty            removes everything in the worktree, .git included
//   wt-big              writes a 90 MB binary file big.bin and harness-file.txt
//   wt-huge             writes a sparse 300 MiB file huge.bin and harness-file.txt
//   wt-sensitive        writes .mcp.json, .claude/settings.json, sub/.vscode/tasks.json (paths
//                       the parent guards) and ordinary.txt
// A planted command, if anything runs it, touches <repo>/.sonata/pwned-<where>-<kind>.
#pragma once

#include <string>

/// Carries out `scenario` when it is one of the above; false when it is not.
bool worktree_attack(const std::string& scenario);
