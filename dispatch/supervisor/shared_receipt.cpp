// The shared receipt's checks of its run directory.
#include "dispatch/supervisor/shared_receipt.hpp"

#include <sys/stat.h>

namespace sonata::dispatch {

void SharedReceipt::check_dir() {
    struct stat at_path {};
    struct stat opened {};
    const std::lock_guard<std::mutex> lock(mutex);
    if (::lstat(dir.path().c_str(), &at_path) != 0 || ::fstat(dir.fd(), &opened) != 0 ||
        at_path.st_ino != opened.st_ino || at_path.st_dev != opened.st_dev)
        abandon("its run directory was removed or replaced");
}

void SharedReceipt::abandon(std::string why) {
    if (abandoned.empty()) abandoned = "stopped: " + std::move(why);
    cancel.store(true);
}

} // namespace sonata::dispatch
