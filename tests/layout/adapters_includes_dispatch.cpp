// adapters may not include dispatch.
#include "dispatch/run.hpp"
