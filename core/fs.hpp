// Small file-system primitives every layer needs: atomic replacement of a file (temporary file in
// the same directory, then rename) and bounded reads. Readers never see a torn file, and
// concurrent writers of one file leave exactly one writer's content.
#pragma once

#include <cstddef>
#include <string>

#include "core/result.hpp"

namespace sonata {

/// Whether a write is on the disk when it returns.
enum class Durability {
    synced,   ///< fsync before the rename: survives a crash, costs a disk flush.
    unsynced, ///< No fsync: a crash may lose the new content (never tear it).
};

/// What becomes of missing parent directories.
enum class Parents {
    create,     ///< Create them first.
    must_exist, ///< Leave them missing: the write fails.
};

/// How write_file_atomic writes; name the fields at the call site (designated initializers).
struct WriteOptions {
    unsigned mode = 0644; ///< Permission bits of the new file (before the umask).
    Durability durability = Durability::synced;
    Parents parents = Parents::create;
};

/// Replaces `path` with `content` atomically: a uniquely named temporary file beside it, then
/// rename. A symlink at `path` is replaced, not followed. Nothing is left behind on failure.
Result<void> write_file_atomic(const std::string& path, const std::string& content,
                               const WriteOptions& options = {});

/// Like write_file_atomic for the entry `name` (one path component, no '/') of the directory
/// open as `dir_fd`: the caller has already opened and checked the directory, so no later rename
/// or symlink swap of its ancestors can redirect the write. Never creates directories.
Result<void> write_file_atomic_at(int dir_fd, const std::string& name, const std::string& content,
                                  const WriteOptions& options = {});

/// True when `path` is a regular file (symlinks followed) this process may execute.
bool is_executable_file(const std::string& path);

/// Reads a whole regular file of at most `max_bytes`. Missing, unreadable, not a regular file,
/// or larger than `max_bytes` are errors with ExitCode::bad_data naming `path`.
Result<std::string> read_file_bounded(const std::string& path, std::size_t max_bytes);

/// Like read_file_bounded for the entry `name` of the directory open as `dir_fd`, never following
/// a symlink: a file someone linked into the directory (to a secret elsewhere) is an error, not
/// read. `what` names the file in errors.
Result<std::string> read_file_bounded_at(int dir_fd, const std::string& name, std::size_t max_bytes,
                                         const std::string& what);

/// The absolute path of the running binary (/proc/self/exe).
Result<std::string> this_executable();

} // namespace sonata
