// A headless harness run: one process in its own group, its output into harness.log (bounded) and
// the stall clock, its stdout's tail kept for the final message.
#include <utility>

#include "dispatch/launch.hpp"
#include "dispatch/run_processes.hpp"
#include "dispatch/supervisor/harness_runners.hpp"
#include "dispatch/supervisor/run_log.hpp"

namespace sonata::dispatch {
namespace {

constexpr std::size_t k_max_output_kept = 4U
                                          << 20U; ///< The stdout tail kept for the final message.

} // namespace

Result<HarnessEnd> run_headless(const RunPlan& plan, const std::string& prompt,
                                SharedReceipt& shared, ProcessRunner& runner) {
    const Invocation& inv = plan.invocation;
    ProcessRequest request = headless_request(
        inv, prompt, child_environment(marked(current_environment(), shared.receipt), inv),
        plan.cwd);
    request.timeout = plan.limits.timeout;
    request.kill_grace = std::chrono::seconds(5);
    request.max_output_bytes = k_max_output_kept;
    request.cancel = &shared.cancel;
    BoundedLog log(shared.dir, plan.limits.log_cap);
    StallClock stall(shared, plan.limits.stall);
    request.on_start = [&](int pid) {
        (void)shared.dir.write("pgid", std::to_string(pid) + "\n");
        shared.update([&](Receipt& r) { r.harness_pgid = pid; });
    };
    request.on_output = [&](OutputStream, std::string_view chunk) {
        stall.heard();
        if (log.write(chunk)) shared.update([](Receipt& r) { r.log_capped = true; });
    };
    auto result = runner.run(request);
    SONATA_TRY(result);
    return HarnessEnd{std::move(*result), false, false};
}

} // namespace sonata::dispatch
