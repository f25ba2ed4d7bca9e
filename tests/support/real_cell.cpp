#include "tests/support/real_cell.hpp"

#include <gtest/gtest.h>

#include "adapters/registry.hpp"
#include "core/node_runtime.hpp"
#include "probes/cell_runner.hpp"
#include "probes/probe.hpp"

namespace sonata::testing {

Cell run_real_cell(const RealCell& cell, const ScratchDir& dir, const std::string& base,
                   const std::string& template_dir, ProcessRunner& runner) {
    auto adapter = adapters::find_adapter(cell.harness);
    auto probe = probes::find_probe(cell.probe);
    EXPECT_TRUE(adapter && probe) << cell.harness << " " << cell.probe;
    if (!adapter || !probe) return {};
    // The Node.js the harness needs, as `sonata probe` and a dispatch choose it.
    std::string path_first;
    if (const auto need = node_need(cell.executable))
        path_first = choose_node(*need, hermetic_env(dir), runner).path_first;
    probes::CellJob job{.adapter = *adapter,
                        .harness_id = cell.harness,
                        .executable = cell.executable,
                        .path_first = path_first,
                        .version = cell.version,
                        .mode = cell.mode,
                        .role = cell.role,
                        .probe = *probe,
                        .extra_args = {},
                        .rewrite = cell.rewrite};
    const probes::CellSettings settings{.scratch_base = base,
                                        .template_dir = template_dir,
                                        .sonata_path = SONATA_BIN,
                                        .base_env = hermetic_env(dir),
                                        .timeout = std::chrono::seconds(180),
                                        .cancel = nullptr,
                                        .capture_dir = {}};
    return probes::run_cell(job, settings, runner).cell;
}

} // namespace sonata::testing
