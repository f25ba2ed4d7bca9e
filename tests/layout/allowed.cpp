// core may include core.
#include "core/matrix.hpp"
