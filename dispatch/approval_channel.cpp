// The approval socket: one short connection per answer, "yes|no\n<card>" in, "taken" or
// "refused: <why>" back.
#include "dispatch/approval_channel.hpp"

#include <poll.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "core/proc_tree.hpp"
#include "core/text.hpp"

namespace sonata::dispatch {
namespace {

constexpr std::size_t k_max_message = 1U << 20U;
constexpr int k_read_ms = 500; ///< A sender that says nothing for this long is dropped.

/// The address of an abstract socket named `name` (no file: nothing in a directory to swap).
socklen_t abstract_address(const std::string& name, sockaddr_un& addr) {
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    const std::size_t n = std::min(name.size(), sizeof addr.sun_path - 1);
    std::memcpy(addr.sun_path + 1, name.data(), n);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

/// Everything the peer sends until it shuts its side, within k_read_ms per read.
std::optional<std::string> read_all(int fd) {
    std::string text;
    char buffer[4096];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, k_read_ms) <= 0) return std::nullopt;
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) return text;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > k_max_message) return std::nullopt;
    }
}

void reply(int fd, const std::string& text) { (void)!::write(fd, text.data(), text.size()); }

/// Why the peer on `fd` may not answer; empty when it may. Fills `by` with who it is.
std::string refusal_for_peer(int fd, std::string& by) {
    ucred peer{};
    socklen_t size = sizeof peer;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0)
        return "sonata cannot tell who sent the answer";
    by = "pid " + std::to_string(peer.pid) + " uid " + std::to_string(peer.uid) + ": " +
         join(command_line_of(peer.pid), " ").substr(0, 200);
    if (peer.uid != ::geteuid()) return "the answer came from another user";
    if (!parent_of(peer.pid)) return "the answering process is gone";
    if (peer.pid == ::getpid() || is_descendant_of(peer.pid, ::getpid()))
        return "a process of the run itself cannot answer its own approval card";
    return {};
}

} // namespace

std::string approval_socket_name(const std::string& run_id, int supervisor_pid) {
    return "sonata-approval/" + run_id + "/" + std::to_string(supervisor_pid);
}

Result<ApprovalListener> ApprovalListener::listen(const std::string& name) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return fail(ExitCode::failure, "cannot open the approval socket");
    ApprovalListener listener(fd);
    sockaddr_un addr{};
    const socklen_t size = abstract_address(name, addr);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), size) != 0 || ::listen(fd, 8) != 0)
        return fail(ExitCode::failure, "cannot listen for approvals on @" + name);
    return listener;
}

ApprovalListener::ApprovalListener(ApprovalListener&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)) {}

ApprovalListener::~ApprovalListener() {
    if (m_fd >= 0) ::close(m_fd);
}

std::optional<TakenAnswer> ApprovalListener::poll(std::chrono::milliseconds timeout,
                                                  const std::string& card) {
    pollfd p{m_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
    const int fd = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return std::nullopt;
    TakenAnswer taken;
    std::string why = refusal_for_peer(fd, taken.by);
    const auto message = why.empty() ? read_all(fd) : std::nullopt;
    if (why.empty() && !message) why = "the answer did not arrive whole";
    if (why.empty()) {
        const auto newline = message->find('\n');
        const std::string answer = message->substr(0, newline);
        const std::string for_card =
            newline == std::string::npos ? std::string() : message->substr(newline + 1);
        if (answer != "yes" && answer != "no") why = "the answer is neither yes nor no";
        // An answer to a card no longer up (a stale approve) is dropped.
        else if (for_card != card)
            why = "the card it answers is no longer shown";
        taken.yes = answer == "yes";
    }
    reply(fd, why.empty() ? "taken\n" : "refused: " + why + "\n");
    ::close(fd);
    if (!why.empty()) return std::nullopt;
    return taken;
}

Result<void> send_answer(const std::string& name, bool yes, const std::string& card) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(ExitCode::failure, "cannot open a socket to the run's supervisor");
    const timeval patience{15, 0}; // a supervisor busy elsewhere takes the answer within this
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof patience);
    sockaddr_un addr{};
    const socklen_t size = abstract_address(name, addr);
    const std::string message = std::string(yes ? "yes" : "no") + "\n" + card;
    std::string answer;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), size) == 0) {
        std::size_t sent = 0;
        while (sent < message.size()) {
            const ssize_t n = ::write(fd, message.data() + sent, message.size() - sent);
            if (n <= 0) break;
            sent += static_cast<std::size_t>(n);
        }
        ::shutdown(fd, SHUT_WR);
        char buffer[512];
        for (ssize_t n = 0; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
            answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (answer == "taken\n") return {};
    if (answer.empty()) return fail(ExitCode::failure, "the run's supervisor did not answer");
    return fail(ExitCode::usage,
                "the run's supervisor " + answer.substr(0, answer.find('\n')).substr(0, 300));
}

} // namespace sonata::dispatch
