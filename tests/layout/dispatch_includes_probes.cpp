// dispatch may not include probes.
#include "probes/probe.hpp"
