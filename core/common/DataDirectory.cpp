#include "common/DataDirectory.h"

#include <cstdlib>
#include <filesystem>

#ifndef OCTO_DATA_RELATIVE
#define OCTO_DATA_RELATIVE "../share/octofluid"
#endif

namespace octo {

namespace fs = std::filesystem;

std::string executableDirectory() {
    std::error_code ec;
    // Linux: /proc/self/exe names the running binary even when started through a symlink or PATH.
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec || exe.empty())
        return {};
    return exe.parent_path().string();
}

std::string dataDirectory() {
    if (const char* env = std::getenv("OCTO_DATA_DIR"); env && *env)
        return env;
    const std::string exeDir = executableDirectory();
    const fs::path base = exeDir.empty() ? fs::current_path() : fs::path(exeDir);
    return (base / OCTO_DATA_RELATIVE).lexically_normal().string();
}

} // namespace octo
