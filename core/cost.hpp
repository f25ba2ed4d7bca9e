// What a run cost, and where that figure comes from: a harness that reports nothing has an unknown
// cost, never a cost of 0.
#pragma once

#include <optional>
#include <string_view>

#include "core/enum_names.hpp"

namespace sonata {

/// Where a run's cost comes from. Spellings are receipt values: never rename.
enum class CostSource {
    native,    ///< The harness's own accounting, the one its budget limit enforces (claude).
    reported,  ///< A figure the harness prints, with no budget limit of its own behind it.
    estimated, ///< sonata's estimate from the token counts the harness reported.
    unknown,   ///< The harness reported no cost: the value is absent, never 0.
};

/// Every source with its spelling.
inline constexpr EnumNames<CostSource, 4> k_cost_sources{{
    {"native", CostSource::native},
    {"reported", CostSource::reported},
    {"estimated", CostSource::estimated},
    {"unknown", CostSource::unknown},
}};

std::string_view to_string(CostSource source);

/// A run's cost as its harness's own output tells it.
struct RunCost {
    std::optional<double> usd; ///< Absent when unknown.
    CostSource source = CostSource::unknown;
    std::optional<long long> input_tokens;  ///< As the harness counted them; absent when unsaid.
    std::optional<long long> output_tokens; ///< As the harness counted them; absent when unsaid.

    bool operator==(const RunCost&) const = default;
};

} // namespace sonata
