// The bounded harness.log and the stall clock.
#include "dispatch/supervisor/run_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace sonata::dispatch {

BoundedLog::BoundedLog(const RunDirectory& dir, std::size_t cap)
    : m_fd(::openat(dir.fd(), "harness.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                    0600)),
      m_cap(cap) {}

BoundedLog::~BoundedLog() {
    if (m_fd >= 0) ::close(m_fd);
}

bool BoundedLog::write(std::string_view chunk) {
    if (m_fd < 0 || m_capped) return false;
    const std::size_t room = m_cap - std::min(m_cap, m_written);
    const std::size_t n = std::min(room, chunk.size());
    if (n > 0 && ::write(m_fd, chunk.data(), n) > 0) m_written += n;
    if (n < chunk.size()) {
        const std::string note = "\n[sonata: harness.log reached its cap of " +
                                 std::to_string(m_cap) +
                                 " bytes; the rest of the output was dropped]\n";
        (void)!::write(m_fd, note.data(), note.size());
        m_capped = true;
        return true;
    }
    return false;
}

StallClock::StallClock(SharedReceipt& shared, std::chrono::seconds stall)
    : m_shared(shared), m_stall(stall), m_thread([this] { loop(); }) {}

StallClock::~StallClock() {
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_changed.notify_one();
    m_thread.join();
}

void StallClock::loop() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            if (m_changed.wait_for(lock, std::chrono::milliseconds(200), [&] { return m_stop; }))
                return;
        }
        m_shared.check_dir();
        const bool quiet =
            Clock::now() - Clock::time_point(Clock::duration(m_last.load())) > m_stall;
        m_shared.update([&](Receipt& r) {
            if (quiet && r.state == RunState::running) r.state = RunState::stalled;
            if (!quiet && r.state == RunState::stalled) r.state = RunState::running;
        });
    }
}

} // namespace sonata::dispatch
