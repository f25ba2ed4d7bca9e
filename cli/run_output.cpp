// Printing runs. Everything a run directory holds is untrusted text (a harness can write it, a
// repository can plant it): it reaches the terminal only through terminal_safe(), and the report
// is read only as a regular file inside the run directory.
#include "cli/run_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/json_parse.hpp"
#include "core/text.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::cli {

namespace {

/// The cost as a person reads it: the value and its source, the token counts, the budget.
std::string cost_text(const dispatch::Receipt& r) {
    // An unknown cost is said to be unknown: never $0.
    std::string text = r.cost.usd
                           ? fmt::format("${:.4f} ({})", *r.cost.usd, to_string(r.cost.source))
                           : std::string("unknown");
    if (r.cost.input_tokens || r.cost.output_tokens) {
        const auto count = [](const std::optional<long long>& n) {
            return n ? std::to_string(*n) : std::string("?");
        };
        text += ", tokens in " + count(r.cost.input_tokens) + " out " + count(r.cost.output_tokens);
    }
    if (r.max_budget_usd)
        text += fmt::format(", budget ${:.2f} {}", *r.max_budget_usd,
                            r.budget_enforced ? "enforced by the harness" : "not enforced");
    return text;
}

/// The run's report.md: a regular file inside its run directory, never what a link points at.
Result<std::string> read_report(const std::string& run_dir) {
    auto dir = dispatch::RunDirectory::open(run_dir);
    SONATA_TRY(dir);
    return dir->read("report.md", 64U << 20U);
}

} // namespace

std::string status_line(const dispatch::Receipt& r) {
    std::string line = r.id + "  " + std::string(to_string(r.state)) + "  " + r.harness + "@" +
                       r.version + "  " + r.mode + "  " + r.role;
    if (r.state == dispatch::RunState::paused && !r.prompt.empty())
        line += "  waiting for approval:\n" + r.prompt;
    if (r.degraded) line += "  degraded: " + r.degraded_reason;
    if (dispatch::is_final(r.state))
        line += "  report: " + std::string(r.report_source == dispatch::ReportOrigin::pending
                                               ? "none"
                                               : to_string(r.report_source));
    if (dispatch::is_final(r.state) && !r.started_at.empty()) line += "  cost: " + cost_text(r);
    if (!r.retries.empty()) line += "  retried once: " + r.retries.front().why;
    if (!r.note.empty()) line += "  note: " + r.note;
    return terminal_safe(line);
}

void print_run(const std::string& run_dir, const dispatch::Receipt& r, bool json) {
    auto report = read_report(run_dir);
    if (json) {
        nlohmann::ordered_json out;
        out["receipt"] = parse_ordered_json(dispatch::receipt_to_json(r)).value(); // always valid
        out["report"] = report ? nlohmann::ordered_json(*report) : nlohmann::ordered_json(nullptr);
        std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                  << '\n';
        return;
    }
    if (dispatch::is_final(r.state) && report && r.degraded)
        std::cerr << "sonata: the run is degraded: " << terminal_safe(r.degraded_reason) << '\n';
    std::cout << run_text(run_dir, r);
}

std::string run_text(const std::string& run_dir, const dispatch::Receipt& r,
                     std::size_t report_cap) {
    auto report = read_report(run_dir);
    if (dispatch::is_final(r.state) && report) {
        if (report->size() <= report_cap) return terminal_safe(*report);
        return terminal_safe(report->substr(0, report_cap)) +
               "\n[… the report continues: " + std::to_string(report->size() - report_cap) +
               " more bytes in " + run_dir + "/report.md; the run's output: sonata log " + r.id +
               "]\n";
    }
    std::string text = status_line(r) + '\n';
    if (r.state == dispatch::RunState::paused)
        text += "answer with: sonata approve " + r.id + " --yes (or --no)\n";
    if (!dispatch::is_final(r.state)) text += "continue with: sonata wait " + r.id + '\n';
    return text;
}

std::string last_output_line(const std::string& run_dir) {
    constexpr off_t k_tail = 4096;
    const int fd = ::open((run_dir + "/harness.log").c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return {};
    struct stat st {};
    std::string text;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const off_t from = st.st_size > k_tail ? st.st_size - k_tail : 0;
        text.resize(static_cast<std::size_t>(st.st_size - from));
        const ssize_t n = ::pread(fd, text.data(), text.size(), from);
        text.resize(n > 0 ? static_cast<std::size_t>(n) : 0U);
    }
    ::close(fd);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
        text.pop_back();
    const auto start = text.find_last_of('\n');
    std::string line = start == std::string::npos ? text : text.substr(start + 1);
    if (line.size() > 200) line = line.substr(line.size() - 200);
    return line;
}

} // namespace sonata::cli
