#pragma once
// Frame patterns of `reconstruct` (in/frame_%04d.ply): parsed and substituted here, never handed to
// printf or a regex. A pattern is a path whose file name holds exactly one `%d` or `%0Nd`
// (1 <= N <= kMaxFrameWidth); anything else with a '%' is refused with a message naming the bound.
#include <filesystem>
#include <optional>
#include <string>

namespace octo::cli {

/// Widest zero padding of a frame number (frame numbers have at most 12 digits).
constexpr int kMaxFrameWidth = 12;
/// Largest frame number of a pattern (12 digits).
constexpr long long kMaxFrameNumber = 999'999'999'999;

struct FramePattern {
    std::filesystem::path dir; ///< the directory part (empty: the working directory)
    std::string prefix;        ///< file name before the spec
    std::string suffix;        ///< file name after the spec
    int width = 0;             ///< 0: %d, else %0Nd

    /// The path of frame `frame` (0 <= frame <= kMaxFrameNumber).
    std::string format(long long frame) const;
    /// The frame number of a file name (no directory) written by format(), if it is one.
    std::optional<long long> match(const std::string& fileName) const;
};

/// nullopt when `text` contains no '%'. Otherwise the pattern, or std::invalid_argument naming
/// `what` (e.g. "IN"), the text and the rule: one %d or %0Nd with N <= 12, in the file name.
std::optional<FramePattern> parseFramePattern(const std::string& what, const std::string& text);

} // namespace octo::cli
