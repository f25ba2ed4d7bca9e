// Fuzzes `sonata init`'s edits of a Claude Code settings.json: install and uninstall either refuse
// the file or produce JSON on which installing again changes nothing and uninstalling leaves no
// sonata hook behind.
#include "cli/init_support.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

constexpr const char* k_command = "/usr/bin/sonata-hook";
constexpr const char* k_source = "settings.json";

void check_clean_uninstall(const std::string& text) {
    using sonata::fuzz::check;
    const auto out = sonata::cli::uninstall_hook(text, k_source);
    check(out.has_value(), "uninstall_hook rejects what init wrote:\n" + text);
    const auto twice = sonata::cli::uninstall_hook(out->text, k_source);
    check(twice && !twice->changed, "a second uninstall still found a sonata hook:\n" + out->text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using sonata::fuzz::check;
    const std::string text(sonata::fuzz::as_text(data, size));
    if (const auto installed = sonata::cli::install_hook(text, k_command, k_source)) {
        const auto again = sonata::cli::install_hook(installed->text, k_command, k_source);
        check(again && !again->changed && again->text == installed->text,
              "installing twice is not idempotent:\n" + installed->text);
        check_clean_uninstall(installed->text);
    }
    if (const auto removed = sonata::cli::uninstall_hook(text, k_source)) {
        check(removed->changed || removed->text == text, "an unchanged uninstall edited the text");
        if (removed->changed) check_clean_uninstall(removed->text);
    }
    return 0;
}
