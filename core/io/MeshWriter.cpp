#include "io/MeshWriter.h"

#include "io/PlyWriter.h"

#include <cstdio>
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

void writeMeshObj(const std::string& path, const TriangleMesh& mesh, const std::string& comment) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        throw std::runtime_error(path + ": cannot open for writing");
    std::vector<char> buf(1 << 20);
    std::setvbuf(f, buf.data(), _IOFBF, buf.size());
    std::fprintf(f, "# octofluid surface: %zu vertices, %zu triangles\n", mesh.vertices.size(),
                 mesh.triangles.size());
    if (!comment.empty())
        std::fprintf(f, "# %s\n", comment.c_str());
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
        throw std::runtime_error(path + ": write failed (disk full?)");
}

void writeMeshPly(const std::string& path, const TriangleMesh& mesh) {
    const bool normals = mesh.normals.size() == mesh.vertices.size() && !mesh.normals.empty();
    PlyElementSpec vertex{"vertex", mesh.vertices.size(), {"float x", "float y", "float z"}};
    if (normals)
        vertex.properties.insert(vertex.properties.end(), {"float nx", "float ny", "float nz"});
    const bool velocities = mesh.velocities.size() == mesh.vertices.size() && !mesh.velocities.empty();
    if (velocities)
        vertex.properties.insert(vertex.properties.end(),
                                 {"float vx", "float vy", "float vz", "float speed"});
    BinaryPlyWriter w(path, "octofluid surface",
                      {vertex, {"face", mesh.triangles.size(), {"list uchar int vertex_indices"}}});
    for (size_t i = 0; i < mesh.vertices.size(); ++i) {
        for (int a = 0; a < 3; ++a)
            w.putFloat(mesh.vertices[i][a]);
        if (normals)
            for (int a = 0; a < 3; ++a)
                w.putFloat(mesh.normals[i][a]);
        if (velocities) {
            for (int a = 0; a < 3; ++a)
                w.putFloat(mesh.velocities[i][a]);
            w.putFloat(mesh.velocities[i].norm());
        }
        w.endRecord();
    }
    for (const auto& t : mesh.triangles) {
        w.putUint8(3);
        for (uint32_t i : t)
            w.putUint32(i);
        w.endRecord();
    }
    w.finish();
}

void writeMesh(const std::string& path, const TriangleMesh& mesh) {
    if (endsWith(path, ".obj"))
        return writeMeshObj(path, mesh);
    if (endsWith(path, ".ply"))
        return writeMeshPly(path, mesh);
    throw std::runtime_error(path + ": unknown mesh format (use .obj or .ply)");
}

} // namespace octo
