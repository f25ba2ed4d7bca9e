// A harness whose executable carries its package and unpacks it into its cache directory (copilot:
// ~235 MB, whenever that directory holds none) gets one directory for it per machine, shared by the
// version command, every probe cell and every dispatch; nothing else of a run is shared.
#pragma once

#include <string>

#include "adapters/harness_spec.hpp"
#include "core/process.hpp"

namespace sonata::adapters {

/// <harness cache>/unpacked/<spec.id> when the spec names an unpack variable; empty when it names
/// none or `env` has no harness cache (no HOME).
std::string unpacked_package_dir(const HarnessSpec& spec, const Environment& env);

/// Sets the spec's unpack variable in `into` to unpacked_package_dir(spec, env); leaves `into` as
/// it is when that is empty.
void share_unpacked_package(const HarnessSpec& spec, const Environment& env, Environment& into);

} // namespace sonata::adapters
