// sonata_test_child: a child process with one behaviour per mode, for the process runner's and the
// tmux session's tests. Usage: sonata_test_child MODE [ARG...]; see usage() for the modes.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <sys/types.h>

extern char** environ;

namespace {

int usage() {
    std::cerr << "usage: sonata_test_child MODE [ARG...]\n"
                 "  args A...       print argv, one element a line (argv[0] included)\n"
                 "  env             print the environment, one VAR=value a line\n"
                 "  cwd             print the working directory\n"
                 "  fds             print the open file descriptors, one a line\n"
                 "  stdin           copy stdin to stdout\n"
                 "  stderr TEXT     print TEXT to stderr and 'out' to stdout\n"
                 "  exit N          exit with status N\n"
                 "  signal N        kill itself with signal N\n"
                 "  sleep           print 'pid=P pgid=G', then sleep forever\n"
                 "  ignore-term [fork]  ignore SIGTERM and SIGHUP, print pids (and those of\n"
                 "                  a grandchild that does the same), sleep\n"
                 "  flood MIB       write MIB MiB of 0123456789abcdef… to stdout (0: forever)\n"
                 "  grandchild      fork a grandchild that holds stdout and sleeps; exit 3\n"
                 "  prompt          print 'ready> ', read a line, print 'got:LINE', exit 0\n";
    return 64;
}

[[noreturn]] void sleep_forever() {
    for (;;)
        ::pause();
}

void print_ids(const char* who) {
    std::printf("%s=%d pgid=%d\n", who, static_cast<int>(::getpid()),
                static_cast<int>(::getpgrp()));
    std::fflush(stdout);
}

int flood(long mebibytes) {
    std::string block;
    for (int i = 0; i < 4096; ++i)
        block += "0123456789abcdef"; // 64 KiB
    for (long i = 0; mebibytes == 0 || i < mebibytes * 16; ++i) {
        if (std::fwrite(block.data(), 1, block.size(), stdout) != block.size()) return 1;
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
}

int list_fds() {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return 1;
    std::vector<int> fds;
    for (dirent* entry = ::readdir(dir); entry != nullptr; entry = ::readdir(dir)) {
        if (entry->d_name[0] == '.') continue;
        const int fd = std::atoi(entry->d_name);
        if (fd != ::dirfd(dir)) fds.push_back(fd);
    }
    ::closedir(dir);
    std::sort(fds.begin(), fds.end());
    for (const int fd : fds)
        std::cout << fd << '\n';
    return 0;
}

int ignore_term(bool with_grandchild) {
    std::signal(SIGTERM, SIG_IGN);
    std::signal(SIGHUP, SIG_IGN);
    print_ids("pid");
    if (with_grandchild) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            print_ids("grandchild");
            sleep_forever();
        }
    }
    sleep_forever();
}

int grandchild() {
    print_ids("pid");
    const pid_t pid = ::fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        print_ids("grandchild");
        sleep_forever();
    }
    return 3;
}

int prompt() {
    std::cout << "ready> " << std::flush;
    std::string line;
    std::getline(std::cin, line);
    std::cout << "got:" << line << std::endl;
    return 0;
}

int run(const std::string& mode, const std::vector<std::string>& args, char** argv) {
    if (mode == "args") {
        for (char** a = argv; *a != nullptr; ++a)
            std::cout << *a << '\n';
    } else if (mode == "env") {
        for (char** e = environ; *e != nullptr; ++e)
            std::cout << *e << '\n';
    } else if (mode == "cwd") {
        std::vector<char> buffer(4096);
        if (::getcwd(buffer.data(), buffer.size()) == nullptr) return 1;
        std::cout << buffer.data() << '\n';
    } else if (mode == "fds") {
        return list_fds();
    } else if (mode == "stdin") {
        std::cout << std::cin.rdbuf();
    } else if (mode == "stderr" && args.size() == 1) {
        std::cerr << args[0];
        std::cout << "out";
    } else if (mode == "exit" && args.size() == 1) {
        return std::atoi(args[0].c_str());
    } else if (mode == "signal" && args.size() == 1) {
        const int sig = std::atoi(args[0].c_str());
        std::signal(sig, SIG_DFL);
        ::kill(::getpid(), sig);
        sleep_forever();
    } else if (mode == "sleep") {
        print_ids("pid");
        sleep_forever();
    } else if (mode == "ignore-term") {
        return ignore_term(args.size() == 1 && args[0] == "fork");
    } else if (mode == "flood" && args.size() == 1) {
        return flood(std::atol(args[0].c_str()));
    } else if (mode == "grandchild") {
        return grandchild();
    } else if (mode == "prompt") {
        return prompt();
    } else {
        return usage();
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::vector<std::string> args(argv + 2, argv + argc);
    return run(argv[1], args, argv);
}
