// The process's own environment as a map; apart from the process runner so the hook can use it
// without linking Boost.Process.
#include <unistd.h>

#include "core/process.hpp"

extern char** environ;

namespace sonata {

Environment current_environment() {
    Environment env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry(*e);
        const auto eq = entry.find('=');
        if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    return env;
}

} // namespace sonata
