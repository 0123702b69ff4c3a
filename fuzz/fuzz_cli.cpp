// libFuzzer target for the command line's own parsing (issue 30): reconstruct's frame patterns
// and the number parsers. The input is lines: a pattern, a file name, a number text. Allowed
// outcomes are a parsed pattern or std::invalid_argument (parseFramePattern) and a value or
// UsageError (parseWhole / parseReal); anything else escaping, or a pattern that does not read
// back what it writes, is a finding. The sources are compiled in directly: the CLI is an
// executable, not a library.
#include "../app/cli/ArgParser.cpp"
#include "../app/cli/FramePattern.cpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace octo::cli;
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::string lines[3];
    for (size_t i = 0, k = 0; i < text.size() && k < 3; ++i) {
        if (text[i] == '\n')
            ++k;
        else if (k < 3)
            lines[k] += text[i];
    }
    try {
        if (const auto p = parseFramePattern("IN", lines[0])) {
            if (p->width < 0 || p->width > kMaxFrameWidth)
                __builtin_trap();
            // Round trip: every frame it writes is read back as that frame.
            for (long long f : {0LL, 1LL, 7LL, 123456LL, kMaxFrameNumber}) {
                const std::string path = p->format(f);
                const std::string name = std::filesystem::path(path).filename().string();
                const auto back = p->match(name);
                if (!back || *back != f)
                    __builtin_trap();
            }
            // Whatever a name matches as, writing that frame gives the name back.
            if (const auto g = p->match(lines[1]))
                if (std::filesystem::path(p->format(*g)).filename().string() != lines[1])
                    __builtin_trap();
        }
    } catch (const std::invalid_argument&) {
    }
    try {
        const long long v = parseWhole("--frames", lines[2], -1000, 1000000000);
        if (v < -1000 || v > 1000000000)
            __builtin_trap();
    } catch (const UsageError&) {
    }
    try {
        const double v = parseReal("--radius", lines[2], 1e-4, 0.2);
        if (!(v >= 1e-4 && v <= 0.2))
            __builtin_trap();
    } catch (const UsageError&) {
    }
    return 0;
}
