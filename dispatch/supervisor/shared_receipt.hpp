// The receipt of a supervised run, shared by the thread that runs the harness and the stall clock:
// every change is saved at once, and a run whose directory can no longer keep it (unwritable,
// removed, replaced) is cancelled with the reason recorded.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "dispatch/receipt.hpp"
#include "dispatch/run_dir.hpp"

namespace sonata::dispatch {

struct SharedReceipt {
    const RunDirectory& dir;
    Receipt receipt;
    /// The run's cancel flag (a stop signal sets it too); abandoning the run sets it.
    std::atomic<bool>& cancel;
    std::mutex mutex;
    std::string abandoned; ///< Why the run was stopped because its directory cannot keep it.

    SharedReceipt(const RunDirectory& run_dir, Receipt first, std::atomic<bool>& cancel_flag)
        : dir(run_dir), receipt(std::move(first)), cancel(cancel_flag) {}

    /// Applies `change` to the receipt and saves it when it changed anything.
    template <class F> void update(F change) {
        const std::lock_guard<std::mutex> lock(mutex);
        const Receipt before = receipt;
        change(receipt);
        if (receipt == before) return;
        if (!save_receipt(dir, receipt)) abandon("its run directory cannot be written");
    }

    /// A run whose directory was removed or replaced (by a link, say) can no longer be read at
    /// its path: its harness is stopped rather than left running unobserved. What the supervisor
    /// writes still goes into the directory it opened, never through what replaced it.
    void check_dir();

private:
    void abandon(std::string why);
};

} // namespace sonata::dispatch
