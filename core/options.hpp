// Per-task options (`--option k=v`): they may only narrow what the mode's mapping grants.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace sonata {

/// Raw per-task options as given on the command line, key → value, in the order given.
struct TaskOptions {
    std::map<std::string, std::string> values;

    bool has(const std::string& key) const { return values.count(key) != 0; }
    std::optional<std::string> get(const std::string& key) const;

    /// True when `dangerously_skip_permissions=false` was given: drop every bypass flag.
    bool forbids_bypass() const;
};

/// Parses `k=v` strings. A missing '=', an empty key or a repeated key is a usage error.
Result<TaskOptions> parse_task_options(const std::vector<std::string>& pairs);

/// The option every harness accepts. Only `false` is valid: `true` would widen, so it is refused.
inline constexpr const char* k_option_no_bypass = "dangerously_skip_permissions";

/// Checks `dangerously_skip_permissions` and rejects keys outside `accepted` (plus that one), with
/// a "did you mean". Harness-specific values are the adapter's to check.
Result<void> check_option_keys(const TaskOptions& options, const std::vector<std::string>& accepted,
                               const std::string& harness);

/// The error for an option value that is valid but wider than the mode allows.
Error widening_option(const std::string& key, const std::string& value, const std::string& why);

/// The error for an option value that is not one of `valid`.
Error invalid_option(const std::string& key, const std::string& value,
                     const std::vector<std::string>& valid);

} // namespace sonata
