// Fuzzes sonata.toml parsing: any text either parses into a Config or is an error naming the file;
// never a crash, an escaped toml++ exception or undefined behaviour.
#include "core/config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sonata::fuzz::check;
    const std::string text(sonata::fuzz::as_text(data, size));
    const auto config = sonata::parse_config(text, "fuzz.toml");
    if (!config) {
        check(config.error().message.find("fuzz.toml") != std::string::npos,
              "a config error that does not name the file: " + config.error().message);
        return 0;
    }
    for (const auto& [name, role] : config->roles) {
        (void)role;
        (void)config->find_role(name);
    }
    return 0;
}
