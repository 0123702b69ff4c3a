#pragma once
// The malformed-input corpus (tests/data/malformed/MANIFEST.tsv): kind, file, expected error
// substrings. Shared by the io, scene and CLI corpus tests.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef OCTO_TEST_DATA_DIR
#error "OCTO_TEST_DATA_DIR must point at tests/data (set by tests/CMakeLists.txt)"
#endif

namespace octo::test {

struct MalformedCase {
    std::string kind, file;            ///< file: full path
    std::vector<std::string> expected; ///< every one must occur in the error
};

inline std::string malformedDir() {
    return std::string(OCTO_TEST_DATA_DIR) + "/malformed";
}

/// All cases of the manifest (empty when it cannot be read: the tests then fail on the count).
inline std::vector<MalformedCase> malformedCases() {
    std::vector<MalformedCase> out;
    std::ifstream in(malformedDir() + "/MANIFEST.tsv");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        std::vector<std::string> cols;
        std::stringstream s(line);
        std::string c;
        while (std::getline(s, c, '\t'))
            cols.push_back(c);
        if (cols.size() < 3)
            continue;
        MalformedCase m{cols[0], malformedDir() + "/" + cols[1], {cols.begin() + 2, cols.end()}};
        out.push_back(m);
    }
    return out;
}

/// Empty when every expected substring occurs in `error`; otherwise what is missing.
inline std::string missingFrom(const MalformedCase& c, const std::string& error) {
    for (const std::string& e : c.expected)
        if (error.find(e) == std::string::npos)
            return c.file + ": expected '" + e + "' in: " + error;
    return {};
}

/// Peak resident memory of this process in KiB (VmHWM), -1 when unknown.
inline long peakRssKib() {
    std::ifstream f("/proc/self/status");
    std::string key;
    while (f >> key) {
        if (key == "VmHWM:") {
            long v = -1;
            f >> v;
            return v;
        }
        std::getline(f, key);
    }
    return -1;
}

} // namespace octo::test
