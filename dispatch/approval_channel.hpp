// How an answer to an approval card reaches a paused run: a Unix socket in the abstract namespace
// that the run's supervisor listens on. The kernel tells the supervisor who connected
// (SO_PEERCRED), and it takes an answer only from a process of this user that is not one of its
// own descendants, so a harness, and everything it starts (the supervisor is their subreaper, so
// none of them can leave its tree), cannot answer its own card; a file in the run directory,
// which the harness can write, is never read as an answer.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/result.hpp"

namespace sonata::dispatch {

/// An answer the supervisor may act on.
struct TakenAnswer {
    bool yes = false;
    std::string by; ///< "pid N uid U: command line", for the receipt.
};

/// The socket's name for run `run_id` under supervisor `supervisor_pid`.
std::string approval_socket_name(const std::string& run_id, int supervisor_pid);

class ApprovalListener {
public:
    /// Listens on `name`; an error when the name is taken.
    static Result<ApprovalListener> listen(const std::string& name);

    ApprovalListener(ApprovalListener&& other) noexcept;
    ApprovalListener(const ApprovalListener&) = delete;
    ApprovalListener& operator=(const ApprovalListener&) = delete;
    ApprovalListener& operator=(ApprovalListener&&) = delete;
    ~ApprovalListener();

    /// Waits up to `timeout` for one answer to `card`. An answer from a process of the run, from
    /// another user, or to another card is refused (the sender reads why) and not returned.
    std::optional<TakenAnswer> poll(std::chrono::milliseconds timeout, const std::string& card);

private:
    explicit ApprovalListener(int fd) : m_fd(fd) {}
    int m_fd = -1;
};

/// Sends `yes` or no for `card` to the supervisor listening on `name`. An error says why the
/// answer was not taken (refused, nobody listening).
Result<void> send_answer(const std::string& name, bool yes, const std::string& card);

} // namespace sonata::dispatch
