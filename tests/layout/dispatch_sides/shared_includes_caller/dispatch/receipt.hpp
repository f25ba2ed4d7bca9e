#include "dispatch/caller/dispatcher.hpp"
