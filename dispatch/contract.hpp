// The reporting contract a dispatched task carries: what a role is told about its report, the one
// line typed into a TUI, and how a model (the scripted one too) finds where the report goes. No
// dependencies beyond the standard library, so the scripted model and its fuzzers can use it.
#pragma once

#include <string>

namespace sonata::dispatch {

/// The "## Report" paragraph of instructions.md: a read-only role ends with its report; a write
/// role writes it to `report_path`.
std::string report_contract(bool read_only, const std::string& report_path);

/// The one line typed into a TUI: the instructions are a file (a typed newline would submit half a
/// task).
std::string typed_task(const std::string& instructions_path);

/// The report path a dispatched task names: the contract's "… to PATH." in the instructions, or,
/// for a TUI run's one typed line, report.md beside the instructions file it names. Empty when
/// `task` names neither.
std::string report_path_in(const std::string& task);

/// The instructions file a typed_task() line names; empty when `task` is not one.
std::string instructions_path_in(const std::string& task);

} // namespace sonata::dispatch
