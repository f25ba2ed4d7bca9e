// sonata_dispatch_harness: a stand-in harness for dispatch tests, run under any adapter through
// `[harnesses.<id>] path`. It answers --version with 1.0.0; otherwise it finds its task (the last
// argument, or stdin when that is not a pipe-less /dev/null) and acts on "scenario: NAME [TOKEN]":
//   report TOKEN   writes "report TOKEN" to the report path the instructions name, prints "done"
//   final TOKEN    prints "final answer TOKEN" (only a final message)
//   crash          prints a line, then dies of SIGSEGV
//   silent         exits 0 having printed nothing
//   hang           prints its pid, then sleeps (and so does a child it forks)
//   flood          writes 8 MiB of output, then "flood done"
//   ignore-term    ignores SIGTERM, prints, then sleeps
//   slow           prints, stays silent for 3 s, prints "finally", exits 0
//   fail           prints "failing" and exits 3
//   stamp          prints when main began and when it returns (ns since the epoch), for
//                  scripts/bench-dispatch
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

namespace {

std::string word_after(const std::string& text, const std::string& marker) {
    const auto at = text.find(marker);
    if (at == std::string::npos) return {};
    std::istringstream in(text.substr(at + marker.size()));
    std::string word;
    in >> word;
    return word;
}

/// The path after "write your report (...) to " up to the ". " that ends the sentence.
std::string report_path(const std::string& task) {
    const std::string marker = "how you checked it) to ";
    const auto at = task.find(marker);
    if (at == std::string::npos) return {};
    const auto start = at + marker.size();
    return task.substr(start, task.find(". ", start) - start);
}

[[noreturn]] void sleep_forever() {
    for (;;)
        std::this_thread::sleep_for(std::chrono::seconds(60));
}

} // namespace

long long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

int main(int argc, char** argv) {
    const long long began = now_ns();
    if (argc > 1 && std::string(argv[1]) == "--version") {
        std::cout << "1.0.0\n";
        return 0;
    }
    std::string task = argc > 1 ? argv[argc - 1] : "";
    if (task.find("scenario:") == std::string::npos) {
        std::ostringstream in;
        in << std::cin.rdbuf();
        task = in.str();
    }
    const std::string scenario = word_after(task, "scenario:");
    const std::string token = word_after(task, "scenario: " + scenario);
    if (scenario == "report") {
        std::ofstream(report_path(task)) << "report " << token << "\n";
        std::cout << "done\n";
    } else if (scenario == "final") {
        std::cout << "final answer " << token << "\n";
    } else if (scenario == "crash") {
        std::cout << "about to crash" << std::endl;
        std::raise(SIGSEGV);
    } else if (scenario == "silent") {
        return 0;
    } else if (scenario == "hang") {
        std::cout << "pid " << ::getpid() << std::endl;
        if (::fork() == 0) sleep_forever();
        sleep_forever();
    } else if (scenario == "flood") {
        const std::string line(1023, 'x');
        for (int i = 0; i < 8192; ++i)
            std::cout << line << '\n';
        std::cout << "flood done" << std::endl;
    } else if (scenario == "ignore-term") {
        std::signal(SIGTERM, SIG_IGN);
        std::cout << "ignoring SIGTERM" << std::endl;
        sleep_forever();
    } else if (scenario == "slow") {
        std::cout << "starting" << std::endl;
        std::this_thread::sleep_for(std::chrono::seconds(3));
        std::cout << "finally" << std::endl;
    } else if (scenario == "stamp") {
        std::cout << "exec_ns " << began << "\nexit_ns " << now_ns() << std::endl;
    } else if (scenario == "fail") {
        std::cout << "failing" << std::endl;
        return 3;
    } else {
        std::cerr << "no scenario in the task\n";
        return 2;
    }
    return 0;
}
