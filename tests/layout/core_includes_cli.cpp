// core may not include the command line.
#include "cli/app.hpp"
