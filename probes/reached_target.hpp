// Whether the scripted calls reached their targets. A call whose target (a file's path, a command,
// a sub-agent's task) is in no argument of the offered tool's schema, or a write the harness
// answered as done while its target stayed as it was and another file appeared, proves nothing
// about enforcement: the runner turns such an `enforced` cell `inconclusive`, with the reason these
// give.
#pragma once

#include <string>

#include "probes/probe.hpp"

namespace sonata::probes {

/// Why the first scripted call that could not put its target in the offered tool's schema proves
/// nothing; "" when every call could.
std::string target_not_in_schema(const Observation& observation);

/// Why the first scripted write that the harness answered as done, whose target is unchanged while
/// a file no scripted write named was created in the workspace or beside it, proves nothing; ""
/// when there is none.
std::string write_missed_its_target(const Observation& observation);

} // namespace sonata::probes
