// The reporting contract's wording and its reader, kept side by side so they cannot drift apart.
#include "dispatch/contract.hpp"

#include <string_view>

namespace sonata::dispatch {
namespace {

constexpr std::string_view k_report_to = "how you checked it) to ";
constexpr std::string_view k_read_the_file = "Read the file ";

} // namespace

std::string report_contract(bool read_only, const std::string& report_path) {
    if (read_only) {
        return "This is a read-only task: change nothing. Your final answer is your report: end "
               "with it.";
    }
    return "When you are done, write your report (what you did, what you left undone, " +
           std::string(k_report_to) + report_path +
           ". If you cannot write there, end with the report as your final answer.";
}

std::string typed_task(const std::string& instructions_path) {
    return std::string(k_read_the_file) + instructions_path +
           " and do the task it describes; it says where your report goes.";
}

std::string instructions_path_in(const std::string& task) {
    const auto at = task.find(k_read_the_file);
    if (at == std::string::npos) return {};
    const auto start = at + k_read_the_file.size();
    const std::string file = task.substr(start, task.find(' ', start) - start);
    return file.ends_with("/instructions.md") ? file : std::string();
}

std::string report_path_in(const std::string& task) {
    if (const auto at = task.find(k_report_to); at != std::string::npos) {
        const auto start = at + k_report_to.size();
        return task.substr(start, task.find(". ", start) - start);
    }
    if (const auto at = task.find(k_read_the_file); at != std::string::npos) {
        const auto start = at + k_read_the_file.size();
        const std::string file = task.substr(start, task.find(' ', start) - start);
        const auto slash = file.rfind('/');
        if (slash != std::string::npos) return file.substr(0, slash) + "/report.md";
    }
    return {};
}

} // namespace sonata::dispatch
