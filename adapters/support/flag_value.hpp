// Setting a flag's value in an argv: a model name, a session to resume. One copy of "find the
// flag, replace its value, else add it" for every adapter's mapping and endpoint injection.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sonata::adapters {

/// How a flag that is added carries its value.
enum class FlagForm {
    separate, ///< Two arguments: `--model X`.
    joined,   ///< One argument: `--resume=X`.
};

/// Where set_flag_value() adds a flag that is absent: at the end of argv.
inline constexpr std::size_t k_argv_end = static_cast<std::size_t>(-1);

/// Replaces the value of `flag`'s first occurrence in `argv`, in the form it has there (`flag X`
/// or `flag=X`); false, with argv unchanged, when `flag` is absent or has no value after it.
/// `flag` is matched as spelled (`-m` and `--model` are different flags here).
bool replace_flag_value(std::vector<std::string>& argv, std::string_view flag,
                        const std::string& value);

/// Gives `flag` the value `value`: replaces it as replace_flag_value() does, else adds the flag in
/// `form` before index `at` (past the end: at the end). Returns the index of the flag's argument.
/// An empty value changes nothing (the harness keeps its own default) and returns k_argv_end.
std::size_t set_flag_value(std::vector<std::string>& argv, std::string_view flag,
                           const std::string& value, std::size_t at = k_argv_end,
                           FlagForm form = FlagForm::separate);

} // namespace sonata::adapters
