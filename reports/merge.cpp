// Loading several matrices and merging them with a machine label per cell.
#include "reports/merge.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/text.hpp"

namespace sonata::reports {
namespace {

void add_unique(std::vector<std::string>& list, const std::string& item) {
    if (!item.empty() && std::find(list.begin(), list.end(), item) == list.end())
        list.push_back(item);
}

std::string input_label(const SourcedMatrix& input, std::map<std::string, int>& used) {
    std::string label = input.matrix.machine;
    if (label.empty()) label = std::filesystem::path(input.source).stem().string();
    if (label.empty()) label = "machine";
    const int seen = ++used[label];
    return seen == 1 ? label : label + " (" + std::to_string(seen) + ")";
}

} // namespace

Result<std::vector<SourcedMatrix>> load_matrices(const std::vector<std::string>& paths) {
    std::vector<SourcedMatrix> loaded;
    for (const auto& path : paths) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) {
            return fail(ExitCode::bad_data, path + ": no such matrix file");
        }
        auto matrix = load_matrix(path);
        SONATA_TRY(matrix);
        loaded.push_back({path, std::move(*matrix)});
    }
    return loaded;
}

Matrix merge_machines(const std::vector<SourcedMatrix>& inputs) {
    if (inputs.size() == 1) return inputs.front().matrix;
    Matrix merged;
    std::vector<std::string> machines;
    std::vector<std::string> platforms;
    std::vector<std::string> versions;
    std::map<std::string, int> used;
    for (const auto& input : inputs) {
        const std::string label = input_label(input, used);
        std::vector<Cell> cells = input.matrix.cells;
        for (auto& cell : cells) {
            if (cell.machine.empty()) cell.machine = label;
            add_unique(machines, cell.machine);
        }
        if (cells.empty()) add_unique(machines, label);
        add_unique(platforms, input.matrix.platform);
        add_unique(versions, input.matrix.sonata_version);
        merged.created_at = std::max(merged.created_at, input.matrix.created_at);
        merged.merge(cells);
    }
    merged.machine = join(machines, ", ");
    merged.platform = join(platforms, ", ");
    merged.sonata_version = join(versions, ", ");
    return merged;
}

} // namespace sonata::reports
