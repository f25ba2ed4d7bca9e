// A fan-out's combined report (see fanout_report.hpp).
#include "cli/fanout_report.hpp"

#include "cli/run_output.hpp"
#include "core/cost.hpp"
#include "dispatch/caller/run.hpp"

namespace sonata::cli {

std::string fanout_report(const std::vector<dispatch::FanoutMember>& members,
                          std::size_t report_cap) {
    std::size_t ran = 0;
    for (const auto& m : members)
        ran += m.run_dir.empty() ? 0 : 1;
    std::string text = "fan-out to " + std::to_string(members.size()) +
                       " harness(es): " + std::to_string(ran) + " ran\n";
    for (const auto& m : members) {
        if (!m.refused.empty()) {
            text += "\n## " + m.harness + ": refused: " + m.refused + "\n";
            continue;
        }
        if (m.run_dir.empty()) {
            text += "\n## " + m.harness + ": could not start: " + m.error + "\n";
            continue;
        }
        auto receipt = dispatch::run_status(m.run_dir);
        if (!receipt) {
            text += "\n## " + m.harness + ": run " + m.id + ": " + receipt.error().message + "\n";
            continue;
        }
        text += "\n## " + m.harness + ": " + status_line(*receipt) + "\n\n" +
                run_text(m.run_dir, *receipt, report_cap);
    }
    return text;
}

} // namespace sonata::cli
