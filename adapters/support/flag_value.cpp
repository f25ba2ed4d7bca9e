// Setting a flag's value in an argv.
#include "adapters/support/flag_value.hpp"

#include <algorithm>

namespace sonata::adapters {

namespace {

/// Replaces the value of `flag`'s first occurrence; its index, or k_argv_end when it has none.
std::size_t replace_at(std::vector<std::string>& argv, std::string_view flag,
                       const std::string& value) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string_view arg = argv[i];
        if (arg == flag) {
            if (i + 1 == argv.size()) return k_argv_end;
            argv[i + 1] = value;
            return i;
        }
        if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag &&
            arg[flag.size()] == '=') {
            argv[i] = std::string(flag) + "=" + value;
            return i;
        }
    }
    return k_argv_end;
}

} // namespace

bool replace_flag_value(std::vector<std::string>& argv, std::string_view flag,
                        const std::string& value) {
    return replace_at(argv, flag, value) != k_argv_end;
}

std::size_t set_flag_value(std::vector<std::string>& argv, std::string_view flag,
                           const std::string& value, std::size_t at, FlagForm form) {
    if (value.empty()) return k_argv_end;
    if (const auto found = replace_at(argv, flag, value); found != k_argv_end) return found;
    at = std::min(at, argv.size());
    const auto where = argv.begin() + static_cast<std::ptrdiff_t>(at);
    if (form == FlagForm::joined) {
        argv.insert(where, std::string(flag) + "=" + value);
    } else {
        argv.insert(where, {std::string(flag), value});
    }
    return at;
}

} // namespace sonata::adapters
