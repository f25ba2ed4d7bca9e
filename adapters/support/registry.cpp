// The registry over the generated list of adapters.
#include "adapters/registry.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace sonata::adapters {

std::vector<std::unique_ptr<Adapter>> make_all(); // generated from the files in adapters/

const std::vector<std::unique_ptr<Adapter>>& all_adapters() {
    static const auto adapters = [] {
        auto all = make_all();
        std::sort(all.begin(), all.end(),
                  [](const auto& a, const auto& b) { return a->id() < b->id(); });
        return all;
    }();
    return adapters;
}

Result<const Adapter*> find_adapter(std::string_view harness_id) {
    for (const auto& adapter : all_adapters()) {
        if (adapter->matches(harness_id)) return adapter.get();
    }
    return fail(ExitCode::usage, "unknown harness '" + std::string(harness_id) + "'" +
                                     did_you_mean(harness_id, harness_ids()) +
                                     "; known harnesses: " + join(harness_ids(), ", "));
}

std::vector<std::string> harnesses_loading_mcp(const std::string& project,
                                               const std::string& path) {
    std::vector<std::string> ids;
    for (const auto& adapter : all_adapters()) {
        if (adapter->spec().project_mcp == ProjectMcp::shut_out) continue;
        const auto setup = adapter->project_mcp(project, {"sonata", "mcp"});
        if (setup && !setup->files.empty() && setup->files.front().path == path)
            ids.emplace_back(adapter->id());
    }
    return ids;
}

std::vector<std::string> harness_ids() {
    std::vector<std::string> ids;
    for (const auto& adapter : all_adapters())
        ids.emplace_back(adapter->id());
    return ids;
}

} // namespace sonata::adapters
