#include "dispatch/caller/run.hpp"
