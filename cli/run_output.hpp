// How run commands print a run: one status line, the report, or the receipt as JSON.
#pragma once

#include <string>

#include "dispatch/receipt.hpp"

namespace sonata::cli {

/// "<id>  <state>  <harness>@<version>  <mode>  <role>" and what is notable about the run.
std::string status_line(const dispatch::Receipt& receipt);

/// A finished run: its report (or, when it has none, its status); an unfinished one: its status
/// and the command that continues. `json`: {"receipt": …, "report": text or null}.
void print_run(const std::string& run_dir, const dispatch::Receipt& receipt, bool json);

/// The text print_run prints (without --json): a final run's report, cut after `report_cap`
/// characters with a pointer to `sonata log ID` and the report file, or, when the run has no
/// report or is not final, its status line and the command that goes on.
std::string run_text(const std::string& run_dir, const dispatch::Receipt& receipt,
                     std::size_t report_cap = std::string::npos);

/// The last non-empty line of the run's output (at most its last 200 characters), for a progress
/// message; only the end of harness.log is read, as this runs every few seconds while it grows.
std::string last_output_line(const std::string& run_dir);

} // namespace sonata::cli
