// What a supervisor keeps while its harness runs: harness.log, bounded, and the stall clock that
// marks the run `stalled` while the harness is silent.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string_view>
#include <thread>

#include "dispatch/run_dir.hpp"
#include "dispatch/supervisor/shared_receipt.hpp"

namespace sonata::dispatch {

/// Appends output to harness.log up to the cap, then notes once that the rest was dropped.
class BoundedLog {
public:
    BoundedLog(const RunDirectory& dir, std::size_t cap);
    ~BoundedLog();
    BoundedLog(const BoundedLog&) = delete;
    BoundedLog& operator=(const BoundedLog&) = delete;

    /// True the first time the cap is reached.
    bool write(std::string_view chunk);

private:
    int m_fd;
    std::size_t m_cap;
    std::size_t m_written = 0;
    bool m_capped = false;
};

/// Marks the run `stalled` while nothing was heard from the harness for the stall limit, and
/// `running` again once something is; a thread of its own, stopped by the destructor.
class StallClock {
public:
    using Clock = std::chrono::steady_clock;

    StallClock(SharedReceipt& shared, std::chrono::seconds stall);
    ~StallClock();
    StallClock(const StallClock&) = delete;
    StallClock& operator=(const StallClock&) = delete;

    void heard() { m_last = Clock::now().time_since_epoch().count(); }

private:
    void loop();

    SharedReceipt& m_shared;
    std::chrono::seconds m_stall;
    std::atomic<Clock::rep> m_last{Clock::now().time_since_epoch().count()};
    bool m_stop = false;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::thread m_thread; // last: starts once the rest is built
};

} // namespace sonata::dispatch
