// The probe run's output: progress lines, the summary table, the timings file.
#include "cli/probe_output.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "core/fs.hpp"

namespace sonata::cli {
namespace {

double ms(std::chrono::microseconds t) { return static_cast<double>(t.count()) / 1000.0; }

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

} // namespace

void print_summary(const std::vector<probes::CellOutcome>& outcomes) {
    std::cout << fmt::format("\n{:<22} {:<24} {:<18} {:<10} {}\n", "harness", "probe", "mode",
                             "role", "verdict");
    for (const auto& o : outcomes) {
        const Cell& c = o.cell;
        std::cout << fmt::format("{:<22} {:<24} {:<18} {:<10} {}\n", c.harness + "@" + c.version,
                                 c.probe, c.mode, c.role, to_string(c.verdict));
    }
}

Result<void> write_timings(const std::vector<probes::CellOutcome>& outcomes,
                           const std::string& path, std::chrono::steady_clock::duration wall) {
    std::string tsv = "harness\tversion\tprobe\tmode\trole\tverdict\tsetup_ms\tserver_ms\tharness_"
                      "ms\tobserve_ms\t"
                      "teardown_ms\toverhead_ms\n";
    struct Sum {
        std::size_t cells = 0;
        double harness = 0;
        std::vector<double> overheads;
    };
    std::map<std::string, Sum> sums;
    std::vector<double> all_overheads;
    for (const auto& o : outcomes) {
        const auto& t = o.timing;
        const double overhead = ms(t.setup) + ms(t.server) + ms(t.observe) + ms(t.teardown);
        tsv +=
            fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{:.1f}\t{:.1f}\t{:.1f}\t{:.1f}\t{:.1f}\t{:.1f}\n",
                        o.cell.harness, o.cell.version, o.cell.probe, o.cell.mode, o.cell.role,
                        to_string(o.cell.verdict), ms(t.setup), ms(t.server), ms(t.harness),
                        ms(t.observe), ms(t.teardown), overhead);
        Sum& sum = sums[o.cell.harness];
        ++sum.cells;
        sum.harness += ms(t.harness);
        sum.overheads.push_back(overhead);
        all_overheads.push_back(overhead);
    }
    if (auto written = write_file_atomic(path, tsv, WriteOptions{}); !written) return written;
    std::cerr << fmt::format(
        "\nsonata: wall {:.1f} s for {} cell(s); sonata's overhead per cell: median {:.1f} ms\n",
        std::chrono::duration<double>(wall).count(), outcomes.size(), median(all_overheads));
    for (const auto& [harness, sum] : sums) {
        double overhead = 0;
        for (const double o : sum.overheads)
            overhead += o;
        std::cerr << fmt::format("  {:<10} {:>3} cell(s)  harness {:>7.1f} s  sonata {:>6.2f} s  "
                                 "(median {:.1f} ms/cell)\n",
                                 harness, sum.cells, sum.harness / 1000.0, overhead / 1000.0,
                                 median(sum.overheads));
    }
    std::cerr << "sonata: timings written to " << path << '\n';
    return {};
}

probes::CellProgress progress_printer() {
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    return [tty](const probes::CellOutcome& o, std::size_t done, std::size_t total) {
        const Cell& c = o.cell;
        const std::string line =
            fmt::format("[{}/{}] {}@{} {} {} {}: {}", done, total, c.harness, c.version, c.probe,
                        c.mode, c.role, to_string(c.verdict));
        if (tty)
            std::cerr << "\r\033[K" << line << (done == total ? "\n" : "") << std::flush;
        else
            std::cerr << line << '\n';
    };
}

} // namespace sonata::cli
