// The directory a harness unpacks its own package into, shared per machine.
#include "adapters/support/unpacked_package.hpp"

#include "core/node_runtime.hpp"

namespace sonata::adapters {

std::string unpacked_package_dir(const HarnessSpec& spec, const Environment& env) {
    const std::string cache = harness_cache_dir(env);
    if (spec.unpack_env.empty() || cache.empty()) return {};
    return cache + "/unpacked/" + spec.id;
}

void share_unpacked_package(const HarnessSpec& spec, const Environment& env, Environment& into) {
    if (const std::string dir = unpacked_package_dir(spec, env); !dir.empty())
        into[spec.unpack_env] = dir;
}

} // namespace sonata::adapters
