#include "io/PlyWriter.h"

#include <bit>
#include <cstring>
#include <stdexcept>

namespace octo {

BinaryPlyWriter::BinaryPlyWriter(const std::string& path, const std::string& comment,
                                 const std::vector<PlyElementSpec>& elements)
    : path_(path), file_(path, std::ios::binary) {
    if (!file_)
        throw std::runtime_error(path + ": cannot open for writing");
    file_ << "ply\nformat binary_little_endian 1.0\n";
    if (!comment.empty())
        file_ << "comment " << comment << "\n";
    for (const PlyElementSpec& e : elements) {
        file_ << "element " << e.name << " " << e.count << "\n";
        for (const std::string& p : e.properties)
            file_ << "property " << p << "\n";
    }
    file_ << "end_header\n";
    out_.reserve(kBlock + 64);
}

void BinaryPlyWriter::putUint32(uint32_t u) {
    if constexpr (std::endian::native == std::endian::big)
        u = __builtin_bswap32(u);
    const char* b = reinterpret_cast<const char*>(&u);
    out_.insert(out_.end(), b, b + 4);
}

void BinaryPlyWriter::putFloat(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    putUint32(u);
}

void BinaryPlyWriter::flush() {
    file_.write(out_.data(), std::streamsize(out_.size()));
    out_.clear();
}

void BinaryPlyWriter::finish() {
    flush();
    file_.close();
    if (!file_)
        throw std::runtime_error(path_ + ": write failed (disk full?)");
}

} // namespace octo
