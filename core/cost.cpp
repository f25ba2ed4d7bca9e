// Names of the cost sources, as receipts spell them.
#include "core/cost.hpp"

namespace sonata {

std::string_view to_string(CostSource source) { return name_of(k_cost_sources, source, "unknown"); }

} // namespace sonata
