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

} // namespace sonata::cli
