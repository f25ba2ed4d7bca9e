// A fan-out's combined report: a section per harness with its run's state, cost, id and report,
// or why it was refused or could not start. `sonata dispatch --fanout` prints it; the MCP
// dispatch tool returns it.
#pragma once

#include <string>
#include <vector>

#include "dispatch/caller/fanout.hpp"

namespace sonata::cli {

/// The combined report, each run's report cut after `report_cap` characters.
std::string fanout_report(const std::vector<dispatch::FanoutMember>& members,
                          std::size_t report_cap = std::string::npos);

} // namespace sonata::cli
