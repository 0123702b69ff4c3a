#include "io/MeshWriter.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace octo {

namespace {
bool endsWith(const std::string& s, const std::string& suffix) {
    if (s.size() < suffix.size())
        return false;
    for (size_t i = 0; i < suffix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i])
            return false;
    return true;
}
} // namespace

void writeMeshObj(const std::string& path, const TriangleMesh& mesh) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        throw std::runtime_error(path + ": cannot open for writing");
    std::vector<char> buf(1 << 20);
    std::setvbuf(f, buf.data(), _IOFBF, buf.size());
    std::fprintf(f, "# octofluid surface: %zu vertices, %zu triangles\n", mesh.vertices.size(),
                 mesh.triangles.size());
    for (const Vec3f& v : mesh.vertices)
        std::fprintf(f, "v %.7g %.7g %.7g\n", v.x(), v.y(), v.z());
    const bool normals = mesh.normals.size() == mesh.vertices.size() && !mesh.normals.empty();
    if (normals)
        for (const Vec3f& n : mesh.normals)
            std::fprintf(f, "vn %.5g %.5g %.5g\n", n.x(), n.y(), n.z());
    for (const auto& t : mesh.triangles) {
        if (normals)
            std::fprintf(f, "f %u//%u %u//%u %u//%u\n", t[0] + 1, t[0] + 1, t[1] + 1, t[1] + 1, t[2] + 1,
                         t[2] + 1);
        else
            std::fprintf(f, "f %u %u %u\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    const bool ok = std::ferror(f) == 0;
    if (std::fclose(f) != 0 || !ok)
        throw std::runtime_error(path + ": write failed");
}

void writeMeshPly(const std::string& path, const TriangleMesh& mesh) {
    std::ofstream f(path, std::ios::binary);
    if (!f)
        throw std::runtime_error(path + ": cannot open for writing");
    const bool normals = mesh.normals.size() == mesh.vertices.size() && !mesh.normals.empty();
    f << "ply\nformat binary_little_endian 1.0\ncomment octofluid surface\nelement vertex "
      << mesh.vertices.size() << "\nproperty float x\nproperty float y\nproperty float z\n";
    if (normals)
        f << "property float nx\nproperty float ny\nproperty float nz\n";
    f << "element face " << mesh.triangles.size() << "\nproperty list uchar int vertex_indices\nend_header\n";
    std::vector<char> out;
    auto put32 = [&](uint32_t u) {
        if constexpr (std::endian::native == std::endian::big)
            u = __builtin_bswap32(u);
        const char* b = reinterpret_cast<const char*>(&u);
        out.insert(out.end(), b, b + 4);
    };
    auto putf = [&](float v) {
        uint32_t u;
        std::memcpy(&u, &v, 4);
        put32(u);
    };
    auto flush = [&](bool force) {
        if (force || out.size() > (1u << 20)) {
            f.write(out.data(), std::streamsize(out.size()));
            out.clear();
        }
    };
    for (size_t i = 0; i < mesh.vertices.size(); ++i) {
        for (int a = 0; a < 3; ++a)
            putf(mesh.vertices[i][a]);
        if (normals)
            for (int a = 0; a < 3; ++a)
                putf(mesh.normals[i][a]);
        flush(false);
    }
    for (const auto& t : mesh.triangles) {
        out.push_back(char(3));
        for (uint32_t i : t)
            put32(i);
        flush(false);
    }
    flush(true);
    if (!f)
        throw std::runtime_error(path + ": write failed");
}

void writeMesh(const std::string& path, const TriangleMesh& mesh) {
    if (endsWith(path, ".obj"))
        return writeMeshObj(path, mesh);
    if (endsWith(path, ".ply"))
        return writeMeshPly(path, mesh);
    throw std::runtime_error(path + ": unknown mesh format (use .obj or .ply)");
}

} // namespace octo
