// Matrices from several machines (one per CI job, say) merged into one, with the machine as part of
// every cell, so a report can show where the same harness version enforces differently.
#pragma once

#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/result.hpp"

namespace sonata::reports {

/// A matrix and the file it came from.
struct SourcedMatrix {
    std::string source; ///< Path; its stem labels the machine when the matrix names none.
    Matrix matrix;
};

/// Loads each file in order. A missing, unreadable or corrupt file is an ExitCode::bad_data error
/// that names it: a report never quietly leaves a machine out.
Result<std::vector<SourcedMatrix>> load_matrices(const std::vector<std::string>& paths);

/// One input is returned as it is. Several merge into one matrix in which every cell names its
/// machine: the cell's own label (the input was merged before), else its matrix's `machine`, else
/// the file's stem; inputs with the same label are told apart as "label (2)", "label (3)"… The
/// merged header lists the machines, platforms and sonata versions; created_at is the latest.
Matrix merge_machines(const std::vector<SourcedMatrix>& inputs);

} // namespace sonata::reports
