#include "io/FileRead.h"

#include "io/ParticleIo.h" // FileFormatError

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace octo {

std::string byteText(uint64_t bytes) {
    char buf[64];
    if (bytes >= (uint64_t(1) << 30))
        std::snprintf(buf, sizeof buf, "%.3g GiB", double(bytes) / double(uint64_t(1) << 30));
    else if (bytes >= (uint64_t(1) << 20))
        std::snprintf(buf, sizeof buf, "%.3g MiB", double(bytes) / double(uint64_t(1) << 20));
    else
        std::snprintf(buf, sizeof buf, "%llu bytes", (unsigned long long)bytes);
    return buf;
}

std::string readRegularFile(const std::string& path, uint64_t maxBytes, const std::string& what) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw FileFormatError(path + ": cannot open " + what + " (no such file)");
    if (!fs::is_regular_file(st))
        throw FileFormatError(path + ": not a regular file (a device, pipe or directory cannot be a " + what +
                              ")");
    const uintmax_t size = fs::file_size(path, ec);
    if (ec)
        throw FileFormatError(path + ": cannot read the size of the " + what + ": " + ec.message());
    if (size > maxBytes)
        throw FileFormatError(path + ": " + what + " of " + byteText(size) + " is larger than the limit of " +
                              byteText(maxBytes));
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw FileFormatError(path + ": cannot open " + what);
    std::string data(size_t(size), '\0');
    f.read(data.data(), std::streamsize(size));
    if (size_t(f.gcount()) != data.size())
        throw FileFormatError(path + ": read error (the " + what + " changed while it was read?)");
    return data;
}

} // namespace octo
