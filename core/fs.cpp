// Atomic writes and bounded reads with plain POSIX calls: they run on the hook's hot path, so no
// streams and no more system calls than needed.
#include "core/fs.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <filesystem>

#include <sys/random.h>
#include <sys/stat.h>

namespace sonata {
namespace {

/// Closes a descriptor when it goes out of scope.
class Fd {
public:
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() {
        if (m_fd >= 0) ::close(m_fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }
    int release() {
        const int fd = m_fd;
        m_fd = -1;
        return fd;
    }

private:
    int m_fd;
};

/// 16 hex digits from the kernel's generator (or the clock and pid when it is unavailable).
std::string random_suffix() {
    unsigned long long bits = 0;
    if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bits)) {
        const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
        bits = static_cast<unsigned long long>(now) ^
               (static_cast<unsigned long long>(::getpid()) << 32U);
    }
    static constexpr char k_hex[] = "0123456789abcdef";
    std::string out(16, '0');
    for (auto& c : out) {
        c = k_hex[bits & 0xFU];
        bits >>= 4U;
    }
    return out;
}

bool write_all(int fd, const std::string& content) {
    std::size_t written = 0;
    while (written < content.size()) {
        const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        written += static_cast<std::size_t>(n);
    }
    return true;
}

/// Renames `tmp` over `name`. Unsynced writes swap the two names instead (RENAME_EXCHANGE) and
/// then delete the old file: ext4 flushes a file renamed over an existing one (auto_da_alloc),
/// which costs milliseconds on every hook call, while the swap is just as atomic for readers.
bool move_into_place(int dir_fd, const std::string& tmp, const std::string& name, bool synced) {
    if (!synced) {
        struct stat st {};
        const bool replaces_file =
            ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode);
        if (replaces_file &&
            ::renameat2(dir_fd, tmp.c_str(), dir_fd, name.c_str(), RENAME_EXCHANGE) == 0) {
            if (::unlinkat(dir_fd, tmp.c_str(), 0) == 0) return true;
            // What came back is not a file we can delete: put it back and fail.
            ::renameat2(dir_fd, tmp.c_str(), dir_fd, name.c_str(), RENAME_EXCHANGE);
            return false;
        }
    }
    return ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) == 0;
}

} // namespace

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

Result<void> write_file_atomic_at(int dir_fd, const std::string& name, const std::string& content,
                                  const WriteOptions& options) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
        return fail(ExitCode::failure, "not a file name: '" + name + "'");
    }
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
        tmp = "." + name + ".tmp-" + random_suffix();
        fd = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return fail(ExitCode::failure, "cannot create a temporary file beside " + name);
    Fd file(fd);
    const bool ok = write_all(fd, content) &&
                    ::fchmod(fd, static_cast<mode_t>(options.mode)) == 0 &&
                    (options.durability == Durability::unsynced || ::fsync(fd) == 0);
    if (!ok || ::close(file.release()) != 0) {
        ::unlinkat(dir_fd, tmp.c_str(), 0);
        return fail(ExitCode::failure, "cannot write " + name);
    }
    if (!move_into_place(dir_fd, tmp, name, options.durability == Durability::synced)) {
        ::unlinkat(dir_fd, tmp.c_str(), 0);
        return fail(ExitCode::failure, "cannot move the new file into place at " + name);
    }
    return {};
}

Result<void> write_file_atomic(const std::string& path, const std::string& content,
                               const WriteOptions& options) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (options.parents == Parents::create) {
        std::error_code ec;
        fs::create_directories(parent, ec);
    }
    const Fd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) return fail(ExitCode::failure, "cannot open the directory of " + path);
    auto written = write_file_atomic_at(dir.get(), target.filename().string(), content, options);
    if (!written)
        return fail(written.error().code,
                    "cannot write " + path + " (" + written.error().message + ")");
    return {};
}

namespace {

/// Reads what `fd` (already opened) holds when it is a regular file of at most `max_bytes`.
Result<std::string> read_open_file(int fd, std::size_t max_bytes, const std::string& what) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return fail(ExitCode::bad_data, what + ": not a regular file");
    }
    std::string text;
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(ExitCode::bad_data, what + ": cannot be read");
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > max_bytes) {
            return fail(ExitCode::bad_data,
                        what + ": larger than " + std::to_string(max_bytes) + " bytes");
        }
    }
    return text;
}

} // namespace

Result<std::string> read_file_bounded(const std::string& path, std::size_t max_bytes) {
    const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) return fail(ExitCode::bad_data, path + ": cannot be read");
    return read_open_file(fd.get(), max_bytes, path);
}

Result<std::string> read_file_bounded_at(int dir_fd, const std::string& name, std::size_t max_bytes,
                                         const std::string& what) {
    if (name.empty() || name.find('/') != std::string::npos)
        return fail(ExitCode::bad_data, what + ": not a file name");
    const Fd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW));
    if (fd.get() < 0) {
        return fail(ExitCode::bad_data,
                    what + (errno == ELOOP ? ": a symbolic link, not read" : ": cannot be read"));
    }
    return read_open_file(fd.get(), max_bytes, what);
}

Result<std::string> this_executable() {
    char buffer[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    if (n <= 0)
        return fail(ExitCode::failure, "cannot tell where the sonata binary is (/proc/self/exe)");
    return std::string(buffer, static_cast<std::size_t>(n));
}

} // namespace sonata
