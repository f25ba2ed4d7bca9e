// The JUnit XML report, for CI systems that show test results: one test suite per harness@version
// (and machine, once merged), one test case per probe × mode × role.
#pragma once

#include <string>

#include "core/matrix.hpp"

namespace sonata::reports {

/// violated → <failure> with the evidence, error → <error>, not-applicable, inconclusive and
/// refused-to-start → <skipped> with the verdict and reason; enforced and asked pass. Test case
/// time is the probe's duration. Valid against fixtures/schemas/junit.xsd.
std::string render_junit(const Matrix& matrix);

} // namespace sonata::reports
