#include "FramePattern.h"

#include <stdexcept>

namespace octo::cli {

namespace {
std::string rule() {
    return "a frame pattern holds exactly one %d or %0Nd (N from 1 to " + std::to_string(kMaxFrameWidth) +
           ") in its file name, and no other '%'";
}
} // namespace

std::string FramePattern::format(long long frame) const {
    if (frame < 0 || frame > kMaxFrameNumber)
        throw std::out_of_range("frame number " + std::to_string(frame) + " is out of range [0, " +
                                std::to_string(kMaxFrameNumber) + "]");
    std::string digits = std::to_string(frame);
    if (int(digits.size()) < width)
        digits.insert(0, size_t(width) - digits.size(), '0');
    const std::string name = prefix + digits + suffix;
    return dir.empty() ? name : (dir / name).string();
}

std::optional<long long> FramePattern::match(const std::string& name) const {
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return std::nullopt;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.size() > size_t(kMaxFrameWidth) || digits.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    long long frame = 0;
    for (char c : digits)
        frame = frame * 10 + (c - '0');
    // Only the spelling format() gives (f_01.ply is not frame 1 of f_%d.ply nor of f_%03d.ply).
    std::string canonical = std::to_string(frame);
    if (int(canonical.size()) < width)
        canonical.insert(0, size_t(width) - canonical.size(), '0');
    if (canonical != digits)
        return std::nullopt;
    return frame;
}

std::optional<FramePattern> parseFramePattern(const std::string& what, const std::string& text) {
    const size_t first = text.find('%');
    if (first == std::string::npos)
        return std::nullopt;
    const std::filesystem::path p(text);
    const std::string name = p.filename().string();
    if (name.find('%') == std::string::npos || text.size() - first > name.size())
        throw std::invalid_argument(what + " '" + text + "': the '%' is in the directory part; " + rule());
    const size_t at = name.find('%');
    if (name.find('%', at + 1) != std::string::npos)
        throw std::invalid_argument(what + " '" + text + "': more than one '%'; " + rule());
    FramePattern f;
    size_t k = at + 1;
    if (k < name.size() && name[k] == '0') {
        const size_t d0 = ++k;
        while (k < name.size() && name[k] >= '0' && name[k] <= '9')
            ++k;
        const std::string w = name.substr(d0, k - d0);
        if (w.empty() || w.size() > 2 || std::stoi(w) < 1 || std::stoi(w) > kMaxFrameWidth)
            throw std::invalid_argument(what + " '" + text + "': width '" + w.substr(0, 20) +
                                        (w.size() > 20 ? "..." : "") + "' of %0Nd is out of range [1, " +
                                        std::to_string(kMaxFrameWidth) + "]; " + rule());
        f.width = std::stoi(w);
    }
    if (k >= name.size() || name[k] != 'd')
        throw std::invalid_argument(what + " '" + text + "': unsupported conversion '" +
                                    name.substr(at, std::min<size_t>(k + 1, name.size()) - at) + "'; " +
                                    rule());
    f.prefix = name.substr(0, at);
    f.suffix = name.substr(k + 1);
    f.dir = p.parent_path();
    return f;
}

} // namespace octo::cli
