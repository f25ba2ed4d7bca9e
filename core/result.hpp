// Result<T> and the one table of exit codes. Expected failures travel as values; exceptions stay at
// library edges and in one catch-all in main.
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace sonata {

/// Every exit code sonata uses. The README's table is generated from nothing: keep both in step.
enum class ExitCode : int {
    ok = 0,      ///< The command did what was asked.
    failure = 1, ///< sonata itself failed (I/O, a bug, a child it could not start).
    usage = 2,   ///< Bad command line: unknown harness, mode, role, option or flag.
    config = 3,  ///< A config file is malformed or holds an unknown key or bad value.
    refused = 4, ///< `plan` decided to refuse: running would be more permissive than the parent.
    not_installed = 5, ///< The harness asked for is not installed (or its version cannot be read).
    bad_data = 6,      ///< A matrix, session or settings file is corrupt or unreadable.
    weakened = 7,   ///< `report --diff` found a cell that got weaker, or the parent guarding more.
    run_failed = 8, ///< `dispatch`/`wait`: the run failed, timed out, was cancelled or lost.
    run_paused = 9, ///< `dispatch`/`wait`: the run waits on an approval (`sonata approve`).
    run_stalled = 10, ///< `dispatch`/`wait`: the harness printed nothing for the stall limit.
    run_pending = 11, ///< `dispatch`/`wait`: the window passed with the run still going.
};

/// An error that sonata reports to the user: what went wrong and which exit code it earns.
struct Error {
    ExitCode code = ExitCode::failure;
    std::string message;
};

template <class T> using Result = tl::expected<T, Error>;

/// Builds the error side of a Result: `return fail(ExitCode::usage, "unknown mode");`.
inline tl::unexpected<Error> fail(ExitCode code, std::string message) {
    return tl::unexpected<Error>(Error{code, std::move(message)});
}

inline int to_int(ExitCode code) { return static_cast<int>(code); }

/// Returns from the enclosing function (whose Result may hold another value type) with the error
/// of `result` when it holds one: `SONATA_TRY(write_file(...));`, or, for a Result kept for its
/// value, `auto text = read(...); SONATA_TRY(text);` and then `*text`.
#define SONATA_TRY(result)                                                                         \
    do {                                                                                           \
        auto&& sonata_try_result_ = (result);                                                      \
        if (!sonata_try_result_) return tl::unexpected(std::move(sonata_try_result_.error()));     \
    } while (false)

} // namespace sonata
