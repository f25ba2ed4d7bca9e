#include "dispatch/supervisor/run_log.hpp"
