// What `sonata probe` prints while and after it runs: a line per finished cell, the summary table,
// and the --timings file with its per-harness figures.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "probes/prober.hpp"

namespace sonata::cli {

/// The table of every cell's verdict, on stdout.
void print_summary(const std::vector<probes::CellOutcome>& outcomes);

/// --timings FILE: one TSV row per cell (milliseconds), and per harness on stderr the harness's own
/// time against sonata's overhead (setup, model server, observing, teardown).
Result<void> write_timings(const std::vector<probes::CellOutcome>& outcomes,
                           const std::string& path, std::chrono::steady_clock::duration wall);

/// One line per finished cell on stderr; on a terminal, each line replaces the one before.
probes::CellProgress progress_printer();

} // namespace sonata::cli
