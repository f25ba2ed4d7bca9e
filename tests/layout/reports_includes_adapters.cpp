// reports may not include adapters.
#include "adapters/adapter.hpp"
