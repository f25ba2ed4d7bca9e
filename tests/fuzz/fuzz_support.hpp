// What every fuzz target shares: the input as text, a property check that libFuzzer reports as a
// crash, and one scratch directory per process for the targets that touch files.
#pragma once

#include <ftw.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace sonata::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// A broken property: printed, then abort(), which libFuzzer saves as a crash like any other.
inline void check(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "sonata fuzz: property broken: %s\n", what.c_str());
    std::abort();
}

inline int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
    return ::remove(path);
}

/// A fresh directory under $TMPDIR (or /tmp), made on first use and removed at exit. Never
/// destroyed, so the exit handler can still read it.
inline const std::string& scratch_dir() {
    static const std::string* const dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        auto* path =
            new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/sonata-fuzz-XXXXXX");
        check(::mkdtemp(path->data()) != nullptr, "mkdtemp " + *path);
        return path;
    }();
    static const bool cleanup = [] {
        return std::atexit([] { ::nftw(dir->c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS); }) ==
               0;
    }();
    (void)cleanup;
    return *dir;
}

} // namespace sonata::fuzz
