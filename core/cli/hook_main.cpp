// `sonata-hook`: the same PreToolUse hook as `sonata hook`, as a small statically linked program.
// The hook runs on every tool call of the user's Claude Code session, and on this kind of machine
// most of a process's start-up is page faults: the full sonata binary touches over 200 pages
// before main (shared libraries and their relocations), this one about 40. `sonata init`
// installs it when it sits beside the sonata binary.
#include "core/process.hpp"
#include "core/session.hpp"

int main() { return sonata::run_hook(sonata::current_environment()); }
