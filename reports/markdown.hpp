// The Markdown report: fit for a pull-request comment and for GitHub's job summary.
#pragma once

#include <string>

#include "core/matrix.hpp"

namespace sonata::reports {

/// A heading with the machine(s) and time, one harness × probe table per mode, a legend, and the
/// evidence of every violated or errored cell and of every cell on which machines disagree.
std::string render_markdown(const Matrix& matrix);

} // namespace sonata::reports
