// A RunHost that starts, signals and kills nothing: it records every call and answers as the test
// scripts it. Its watchdog runs its task when released or destroyed unreleased, as the system
// watchdog does when its supervisor finishes or dies.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run_host.hpp"

namespace sonata::testing {

class FakeRunHost : public RunHost {
public:
    static constexpr int k_watchdog_pid = 4242;

    /// Every call, in order ("start watchdog", "try slot", "pause", "kill descendants but 4242",
    /// "kill group 7 of run X", …).
    std::vector<std::string> calls;
    /// The run's cancel flag, as the stop signals would set it.
    std::atomic<bool> stop{false};
    /// try_slot's answers, front first: a slot's index, or nullopt for "every slot is held";
    /// slot 0 once they run out.
    std::deque<std::optional<int>> slots;
    /// Called at each pause (a queued run waiting), after it is recorded.
    std::function<void()> on_pause;
    /// What kill_descendants reports as killed.
    int leftovers = 0;

    Result<void> start_detached(const std::vector<std::string>& argv, const Environment&,
                                const std::string&) override {
        calls.push_back("start detached " + argv.front());
        return {};
    }

    Result<std::unique_ptr<Watchdog>> start_watchdog(std::function<void()> on_orphaned) override {
        calls.push_back("start watchdog");
        return std::unique_ptr<Watchdog>(new FakeWatchdog(*this, std::move(on_orphaned)));
    }

    std::atomic<bool>& stop_on_signals() override { return stop; }

    Result<std::optional<Slot>> try_slot(const std::string&, int) override {
        calls.push_back("try slot");
        std::optional<int> answer = 0;
        if (!slots.empty()) {
            answer = slots.front();
            slots.pop_front();
        }
        if (!answer) return std::nullopt;
        return Slot{*answer,
                    std::make_unique<Lease>(*this, "give back slot " + std::to_string(*answer))};
    }

    void pause(std::chrono::milliseconds) override {
        calls.push_back("pause");
        if (on_pause) on_pause();
    }

    int kill_descendants(int keep) override {
        calls.push_back("kill descendants but " + std::to_string(keep));
        return leftovers;
    }

    void kill_marked_group(int pgid, const std::string& run_id) override {
        calls.push_back("kill group " + std::to_string(pgid) + " of run " + run_id);
    }

    void kill_marked_process(int pid, unsigned long long, const std::string& run_id,
                             const std::string& argument) override {
        calls.push_back("kill process " + std::to_string(pid) + " of run " + run_id + " naming " +
                        argument);
    }

    std::unique_ptr<DirWatch> watch_dir(const std::string&) override { return nullptr; }

private:
    class Lease : public HostLease {
    public:
        Lease(FakeRunHost& host, std::string on_end) : m_host(host), m_on_end(std::move(on_end)) {}
        ~Lease() override { m_host.calls.push_back(m_on_end); }
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;

    private:
        FakeRunHost& m_host;
        std::string m_on_end;
    };

    class FakeWatchdog : public Watchdog {
    public:
        FakeWatchdog(FakeRunHost& host, std::function<void()> task)
            : m_host(host), m_task(std::move(task)) {}
        /// Destroyed unreleased: the supervisor died, and the watchdog does its job.
        ~FakeWatchdog() override {
            if (m_task) orphaned("watchdog: the supervisor is gone");
        }
        FakeWatchdog(const FakeWatchdog&) = delete;
        FakeWatchdog& operator=(const FakeWatchdog&) = delete;

        int pid() const override { return k_watchdog_pid; }
        void release() override { orphaned("release watchdog"); }

    private:
        void orphaned(const std::string& why) {
            m_host.calls.push_back(why);
            auto task = std::move(m_task);
            m_task = nullptr;
            if (task) task();
        }

        FakeRunHost& m_host;
        std::function<void()> m_task;
    };
};

} // namespace sonata::testing
