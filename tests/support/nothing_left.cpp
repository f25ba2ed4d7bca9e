#include "tests/support/nothing_left.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/proc_stat.hpp"
#include "tests/support/sonata_run.hpp"

namespace sonata::testing {

void expect_nothing_left(const std::string& root, std::optional<int> tmux_server) {
    if (tmux_server) {
        EXPECT_NE(*tmux_server, 0) << "a TUI run has its own tmux server";
    }
    const int server = tmux_server.value_or(0);
    std::vector<std::string> left;
    bool server_alive = false;
    for (int i = 0; i < 50; ++i) {
        left = processes_working_under(root);
        const auto fields = server > 0 ? proc_stat_fields(server) : std::nullopt;
        server_alive = fields && !fields->empty() && (*fields)[0] != "Z"; // a zombie is dead
        if (left.empty() && !server_alive) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(left, std::vector<std::string>{});
    EXPECT_FALSE(server_alive) << "tmux server " << server << " is still running";
}

} // namespace sonata::testing
