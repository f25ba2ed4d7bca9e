// What `sonata harnesses --json` says of one harness, for tests of what sonata detects.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/process.hpp"

namespace sonata::testing {

/// The object for `id` in `sonata harnesses --json`, run with `env` in `cwd`; an empty object,
/// and a test failure, when the run fails or lists no such harness.
nlohmann::json listed_harness(const std::string& id, const Environment& env,
                              const std::string& cwd);

} // namespace sonata::testing
