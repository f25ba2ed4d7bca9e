// Parsing and generic validation of per-task options.
#include "core/options.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace sonata {

std::optional<std::string> TaskOptions::get(const std::string& key) const {
    const auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
}

bool TaskOptions::forbids_bypass() const {
    return get(k_option_no_bypass) == std::optional<std::string>("false");
}

Result<TaskOptions> parse_task_options(const std::vector<std::string>& pairs) {
    TaskOptions options;
    for (const auto& pair : pairs) {
        const auto eq = pair.find('=');
        if (eq == std::string::npos || eq == 0) {
            return fail(ExitCode::usage, "option '" + pair + "' is not of the form key=value");
        }
        const std::string key = pair.substr(0, eq);
        if (!options.values.emplace(key, pair.substr(eq + 1)).second) {
            return fail(ExitCode::usage, "option '" + key + "' is given more than once");
        }
    }
    return options;
}

Result<void> check_option_keys(const TaskOptions& options, const std::vector<std::string>& accepted,
                               const std::string& harness) {
    std::vector<std::string> known = accepted;
    known.emplace_back(k_option_no_bypass);
    for (const auto& [key, value] : options.values) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            return fail(ExitCode::usage, "option '" + key + "' is not understood by harness '" +
                                             harness + "'" + did_you_mean(key, known) +
                                             "; it accepts: " + join(known, ", "));
        }
        if (key == k_option_no_bypass && value != "false") {
            if (value == "true") {
                return tl::unexpected(
                    widening_option(key, value,
                                    "sonata never turns a bypass on by request; dispatch from a "
                                    "bypassPermissions session instead"));
            }
            return tl::unexpected(invalid_option(key, value, {"false"}));
        }
    }
    return {};
}

Error widening_option(const std::string& key, const std::string& value, const std::string& why) {
    return Error{ExitCode::usage, "option " + key + "=" + value +
                                      " would widen what this mode allows, and options may only "
                                      "narrow: " +
                                      why};
}

Error invalid_option(const std::string& key, const std::string& value,
                     const std::vector<std::string>& valid) {
    return Error{ExitCode::usage, "option " + key + " has invalid value '" + value + "'" +
                                      did_you_mean(value, valid) +
                                      "; valid values: " + join(valid, ", ")};
}

} // namespace sonata
