#pragma once
// The one argument parser of octofluid-cli's commands: options with a value (string, number in a
// range, whole number in a range, repeated), flags and positional arguments. Every refusal is a
// UsageError with one line naming the option and what it expected.
#include "Command.h"

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace octo::cli {

/// Bad command line (the commands exit with 2 or 1, as documented per command).
class UsageError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// A finite number in [lo, hi] (either bound may be +-infinity); names `option` when refused.
double parseReal(const std::string& option, const std::string& text, double lo, double hi);
/// A whole number in [lo, hi] without overflow ("99999999999999999999" is out of range, "2.5",
/// "1e3x" and "" are not whole numbers).
long long parseWhole(const std::string& option, const std::string& text, long long lo, long long hi);

/// Smallest leaf edge relative to the particle radius: a leaf of r/10 already puts 100 lattice cells
/// on each particle's cross-section; finer ones only multiply the surface's cells (`--leaf 1e-6` at
/// r = 10 mm: ~1e11 cells, a hang).
constexpr double kMinLeafOverRadius = 0.1;
/// Throws UsageError naming `option` (e.g. "--leaf") when leafSize is neither 0 (automatic) nor at
/// least kMinLeafOverRadius * particleRadius.
void checkLeafSize(const std::string& option, double leafSize, double particleRadius);

class ArgParser {
public:
    using Handler = std::function<void(const std::string& value)>;

    /// An option taking a value: `handler` receives it (and throws UsageError to refuse it).
    ArgParser& option(const std::string& name, Handler handler);
    ArgParser& option(const std::string& name, std::string& out);
    /// A flag without a value.
    ArgParser& flag(const std::string& name, std::function<void()> handler);
    ArgParser& flag(const std::string& name, bool& out);
    /// Positional arguments go here (without this, one is refused). Words starting with "-" and
    /// longer than "-" are options.
    ArgParser& positionals(std::vector<std::string>& out);

    /// Applies the handlers in order; throws UsageError for an unknown option or a missing value.
    void parse(const Args& args) const;

private:
    struct Spec {
        bool takesValue = true;
        Handler handler;
    };
    std::map<std::string, Spec> specs_;
    std::vector<std::string>* positionals_ = nullptr;
};

} // namespace octo::cli
