#pragma once
// The one binary little-endian PLY writer: particles (io/ParticleIo) and triangle meshes
// (io/MeshWriter) both go through it. Values are buffered and written in 1 MiB blocks;
// finish() reports a failed write (full disk, /dev/full) as an exception naming the path.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace octo {

struct PlyElementSpec {
    std::string name;                    ///< "vertex", "face"
    size_t count = 0;                    ///< records
    std::vector<std::string> properties; ///< "float x", "list uchar int vertex_indices"
};

class BinaryPlyWriter {
public:
    /// Opens `path` and writes the header. Throws std::runtime_error naming the path.
    BinaryPlyWriter(const std::string& path, const std::string& comment,
                    const std::vector<PlyElementSpec>& elements);
    void putFloat(float v);
    void putUint32(uint32_t v);
    void putUint8(uint8_t v) { out_.push_back(char(v)); }
    /// Call after every record: writes the buffer when it is large.
    void endRecord() {
        if (out_.size() >= kBlock)
            flush();
    }
    /// Writes what is left and closes; throws std::runtime_error when any write failed.
    void finish();

private:
    static constexpr size_t kBlock = size_t(1) << 20;
    void flush();
    std::string path_;
    std::ofstream file_;
    std::vector<char> out_;
};

} // namespace octo
