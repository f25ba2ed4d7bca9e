// `sonata-hook`: the same PreToolUse hook as `sonata hook`, as a small statically linked program.
// The hook runs on every tool call of the user's Claude Code session, and on this kind of machine
// most of a process's start-up is page faults: the full sonata binary touches over 200 pages
// before main (shared libraries and their relocations), this one about 40. `sonata init`
// installs it when it sits beside the sonata binary.
#include <cstdio>
#include <string_view>

#include "core/process.hpp"
#include "core/session.hpp"

int main(int argc, char** argv) {
    if (argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
        std::fputs(
            "usage: sonata-hook < PRETOOLUSE.json\n"
            "Claude Code's PreToolUse hook, as `sonata hook`: records the session's permission "
            "mode;\nalways exits 0 and prints nothing. Installed by `sonata init`.\n",
            stdout);
        return 0;
    }
    if (argc == 2 && std::string_view(argv[1]) == "--version") {
        std::fputs("sonata-hook " SONATA_VERSION "\n", stdout);
        return 0;
    }
    return sonata::run_hook(sonata::current_environment());
}
