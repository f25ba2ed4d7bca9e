// The HTML report: one self-contained page (no scripts, fonts or images from anywhere), a
// colour-coded matrix per mode with a legend, each cell opening its evidence.
#pragma once

#include <string>

#include "core/matrix.hpp"

namespace sonata::reports {

/// Each measured cell is a <details> element: its summary is the verdict, coloured by the
/// `v-<verdict>` class; opening it shows the evidence. Cells where machines disagree carry the
/// `disagree` class and a "≠" mark.
std::string render_html(const Matrix& matrix);

} // namespace sonata::reports
