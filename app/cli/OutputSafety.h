#pragma once
// No output of a command may be one of its inputs or another of its outputs (issue 30: --stats-json
// onto the scene file, onto the input particles or onto the output mesh; a hard link to the input).
// Files are compared by identity (device and inode, as std::filesystem::equivalent does) when they
// exist, and by their resolved path (., .., symlinks) when they do not exist yet.
#include <string>
#include <vector>

namespace octo::cli {

struct RolePath {
    std::string role; ///< how the message names it: "--stats-json", "OUT", "scene file"
    std::string path;
};

/// Throws std::invalid_argument naming both roles and paths when an output is an input or
/// another output, and when an output path is empty.
void checkOutputsDistinct(const std::vector<RolePath>& inputs, const std::vector<RolePath>& outputs);

} // namespace octo::cli
