// The check that a test left nothing running: no process works under its scratch directory, and a
// TUI's private tmux server (whose working directory is elsewhere) has exited.
#pragma once

#include <optional>
#include <string>

namespace sonata::testing {

/// Nothing a run started runs: no process under `root`, and, for a TUI run (`tmux_server`), its
/// private tmux server is gone. Processes get 5 s to end before the test fails naming them.
void expect_nothing_left(const std::string& root, std::optional<int> tmux_server = std::nullopt);

} // namespace sonata::testing
