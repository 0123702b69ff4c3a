#include "ArgParser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace octo::cli {

namespace {
std::string rangeText(double lo, double hi) {
    std::ostringstream s;
    s << "[" << lo << ", " << hi << "]";
    return s.str();
}
} // namespace

double parseReal(const std::string& option, const std::string& text, double lo, double hi) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || end == text.c_str() || std::isnan(v))
        throw UsageError(option + ": expected a number, got '" + text + "'");
    if (!std::isfinite(v) || errno == ERANGE || v < lo || v > hi)
        throw UsageError(option + ": " + text + " is out of range " + rangeText(lo, hi));
    return v;
}

long long parseWhole(const std::string& option, const std::string& text, long long lo, long long hi) {
    const auto digits = text.find_first_not_of("+-");
    if (text.empty() || digits > 1 || digits == std::string::npos ||
        text.find_first_not_of("0123456789", digits) != std::string::npos)
        throw UsageError(option + ": expected a whole number, got '" + text + "'");
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE || v < lo || v > hi) {
        std::ostringstream s;
        s << option << ": " << text << " is out of range [" << lo << ", " << hi << "]";
        throw UsageError(s.str());
    }
    return v;
}

void checkLeafSize(const std::string& option, double leafSize, double particleRadius) {
    if (leafSize == 0.0 || leafSize >= kMinLeafOverRadius * particleRadius)
        return;
    std::ostringstream s;
    s << option << ": leafSize L = " << leafSize << " m is below particleRadius / "
      << 1.0 / kMinLeafOverRadius << " = " << kMinLeafOverRadius * particleRadius
      << " m (limit; 0 picks 2r/sqrt(3) = " << 2.0 * particleRadius / std::sqrt(3.0) << " m)";
    throw UsageError(s.str());
}

ArgParser& ArgParser::option(const std::string& name, Handler handler) {
    specs_[name] = {true, std::move(handler)};
    return *this;
}

ArgParser& ArgParser::option(const std::string& name, std::string& out) {
    return option(name, [&out](const std::string& v) { out = v; });
}

ArgParser& ArgParser::flag(const std::string& name, std::function<void()> handler) {
    specs_[name] = {false, [h = std::move(handler)](const std::string&) { h(); }};
    return *this;
}

ArgParser& ArgParser::flag(const std::string& name, bool& out) {
    return flag(name, [&out] { out = true; });
}

ArgParser& ArgParser::positionals(std::vector<std::string>& out) {
    positionals_ = &out;
    return *this;
}

void ArgParser::parse(const Args& args) const {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const bool isOption = a.size() > 1 && a[0] == '-';
        if (!isOption) {
            if (!positionals_)
                throw UsageError("unexpected argument '" + a + "' (see octofluid-cli --help)");
            positionals_->push_back(a);
            continue;
        }
        const auto it = specs_.find(a);
        if (it == specs_.end())
            throw UsageError("unknown option '" + a + "' (see octofluid-cli --help)");
        if (!it->second.takesValue) {
            it->second.handler({});
            continue;
        }
        if (i + 1 >= args.size())
            throw UsageError(a + ": missing value");
        it->second.handler(args[++i]);
    }
}

} // namespace octo::cli
