// adapters may not include dispatch.
#include "dispatch/caller/run.hpp"
