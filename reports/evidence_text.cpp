// Formatting evidence fields as labelled plain text.
#include "reports/evidence_text.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "reports/grid.hpp"
#include "reports/text_safety.hpp"

namespace sonata::reports {
namespace {

void add_list(std::string& out, std::string_view label, const std::vector<std::string>& items) {
    if (items.empty()) return;
    out += fmt::format("{}:\n", label);
    for (const auto& item : items)
        out += "  " + printable_text(item) + "\n";
}

} // namespace

std::string evidence_text(const Cell& cell, std::size_t max_tail_lines) {
    const Evidence& e = cell.evidence;
    std::string out = fmt::format("verdict: {}\n", to_string(cell.verdict));
    if (!cell.machine.empty()) out += "machine: " + printable_text(cell.machine) + "\n";
    if (!e.reason.empty()) out += "reason: " + printable_text(e.reason) + "\n";
    add_list(out, "files changed", e.files_changed);
    add_list(out, "tool calls", e.tool_calls);
    add_list(out, "tool results", e.tool_results);
    if (!e.tools_offered.empty())
        out += "tools offered: " + printable_text(join(e.tools_offered, ", ")) + "\n";
    out += fmt::format("exit code: {}{}\n", e.exit_code, e.timed_out ? " (timed out)" : "");
    out += fmt::format("duration: {} ms\n", e.duration_ms);
    if (!e.output_tail.empty()) {
        out += "output tail:\n" + last_lines(printable_text(e.output_tail), max_tail_lines) + "\n";
    }
    return out;
}

std::string evidence_summary(const Cell& cell) {
    const Evidence& e = cell.evidence;
    std::string summary;
    if (!e.reason.empty()) {
        summary = e.reason;
    } else if (!e.files_changed.empty()) {
        summary = "files changed: " + join(e.files_changed, ", ");
    } else {
        summary = std::string(style_of(cell.verdict).meaning);
    }
    for (char& ch : summary) {
        if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    }
    return printable_text(summary);
}

} // namespace sonata::reports
