// Names of the cost sources, as receipts spell them.
#include "core/cost.hpp"

namespace sonata {

std::string_view to_string(CostSource source) {
    switch (source) {
    case CostSource::native: return "native";
    case CostSource::reported: return "reported";
    case CostSource::estimated: return "estimated";
    case CostSource::unknown: return "unknown";
    }
    return "unknown";
}

} // namespace sonata
