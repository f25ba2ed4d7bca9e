// Enums spelled on disk and on the command line: one constexpr table of (spelling, value) pairs
// per enum, and these helpers over it, so that a value's name and a name's value are read from
// the same table in both directions.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "core/text.hpp"

namespace sonata {

/// A table of spellings: the first entry of a value is its name; later ones are accepted aliases.
template <class E, std::size_t N> using EnumNames = std::array<std::pair<std::string_view, E>, N>;

/// The name of `value` in `table`; `fallback` when the table lacks it.
template <class E, std::size_t N>
constexpr std::string_view name_of(const EnumNames<E, N>& table, E value,
                                   std::string_view fallback = {}) {
    for (const auto& [name, v] : table)
        if (v == value) return name;
    return fallback;
}

/// The value spelled `text` in `table`; nullopt when none is.
template <class E, std::size_t N>
constexpr std::optional<E> value_of(const EnumNames<E, N>& table, std::string_view text) {
    for (const auto& [name, v] : table)
        if (name == text) return v;
    return std::nullopt;
}

/// Every spelling in `table`, in its order.
template <class E, std::size_t N> std::vector<std::string> names_in(const EnumNames<E, N>& table) {
    std::vector<std::string> names;
    for (const auto& entry : table)
        names.emplace_back(entry.first);
    return names;
}

/// The value spelled `text`, else an error of `code`: "unknown <what> '<text>'", a "did you mean"
/// and `hint`.
template <class E, std::size_t N>
Result<E> parse_name(const EnumNames<E, N>& table, std::string_view text, std::string_view what,
                     ExitCode code, std::string_view hint = {}) {
    if (const auto value = value_of(table, text)) return *value;
    return fail(code, "unknown " + std::string(what) + " '" + std::string(text) + "'" +
                          did_you_mean(text, names_in(table)) + std::string(hint));
}

} // namespace sonata
