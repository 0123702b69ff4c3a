#include "OutputSafety.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <stdexcept>

namespace octo::cli {

namespace {

// Identity of a file: "dev:ino" when it exists (hard links and every spelling of its path agree),
// else its resolved path.
std::string identity(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0)
        return "inode " + std::to_string(uint64_t(st.st_dev)) + ":" + std::to_string(uint64_t(st.st_ino));
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    return "path " + (ec ? std::filesystem::absolute(path, ec).lexically_normal().string() : p.string());
}

} // namespace

void checkOutputsDistinct(const std::vector<RolePath>& inputs, const std::vector<RolePath>& outputs) {
    std::map<std::string, const RolePath*> seen;
    for (const RolePath& in : inputs)
        if (!in.path.empty())
            seen.emplace(identity(in.path), &in);
    std::map<std::string, const RolePath*> written;
    for (const RolePath& out : outputs) {
        if (out.path.empty())
            throw std::invalid_argument(out.role + ": empty path");
        const std::string id = identity(out.path);
        if (const auto it = seen.find(id); it != seen.end())
            throw std::invalid_argument(out.role + " '" + out.path + "' is the same file as the " +
                                        it->second->role + " '" + it->second->path +
                                        "' (an input); refusing to overwrite it");
        if (const auto [it, fresh] = written.emplace(id, &out); !fresh)
            throw std::invalid_argument(out.role + " '" + out.path + "' is the same file as the " +
                                        it->second->role + " '" + it->second->path +
                                        "' (another output); refusing to write both");
    }
}

} // namespace octo::cli
