#pragma once
// Sub-commands of octofluid-cli register themselves here, one file per command.
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace octo::cli {

using Args = std::vector<std::string>;
/// A command returns the process exit code; it reports errors itself (one line on stderr).
using CommandFn = std::function<int(const Args& args)>;

struct Command {
    std::string usage;   ///< one-line synopsis
    std::string summary; ///< what it does
    CommandFn run;
};

std::map<std::string, Command>& commands();

/// What a std::bad_alloc says on stderr (instead of the bare "std::bad_alloc") when the command
/// did not say what it was doing (OutOfMemoryError does).
inline constexpr const char* kOutOfMemoryMessage =
    "out of memory: the input needs more memory than this machine has available (std::bad_alloc); "
    "choose a larger particle radius, fewer frames or smaller files";

/// A std::bad_alloc caught where the command knows the input: the message names the file, the
/// fields or options that set the size, the sizes and what to change (issue 30).
class OutOfMemoryError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CommandRegistrar {
    CommandRegistrar(const std::string& name, Command command) { commands()[name] = std::move(command); }
};

} // namespace octo::cli
