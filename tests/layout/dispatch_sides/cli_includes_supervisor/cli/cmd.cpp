#include "dispatch/supervisor/shared_receipt.hpp"
#include "dispatch/supervisor/supervise.hpp"
