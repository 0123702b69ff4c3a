#pragma once
// Mesh topology helpers for the surface tests.
#include "common/TriangleMesh.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

namespace octo::test {

struct MeshTopology {
    bool closedManifold = false; ///< every edge in exactly two triangles, opposite directions
    bool duplicateVertices = false;
    long euler = 0;
    size_t badEdges = 0;
    std::string problem;
};

inline MeshTopology checkTopology(const TriangleMesh& m) {
    MeshTopology t;
    std::unordered_map<uint64_t, int> directed; // (a, b) -> count
    directed.reserve(m.triangles.size() * 3);
    for (const auto& tri : m.triangles)
        for (int k = 0; k < 3; ++k) {
            const uint64_t a = tri[size_t(k)], b = tri[size_t((k + 1) % 3)];
            if (a == b) {
                t.problem = "degenerate index";
                return t;
            }
            ++directed[(a << 32) | b];
        }
    size_t undirected = 0;
    for (const auto& [key, count] : directed) {
        const uint64_t a = key >> 32, b = key & 0xFFFFFFFFu;
        auto it = directed.find((b << 32) | a);
        if (count != 1 || it == directed.end() || it->second != 1)
            ++t.badEdges;
        if (a < b || it == directed.end())
            ++undirected;
    }
    t.euler = long(m.vertices.size()) - long(undirected) + long(m.triangles.size());
    t.closedManifold = t.badEdges == 0 && !m.triangles.empty();
    // Welded: no two vertices at the same position.
    std::vector<Vec3f> v = m.vertices;
    std::sort(v.begin(), v.end(), [](const Vec3f& a, const Vec3f& b) {
        return std::lexicographical_compare(a.data(), a.data() + 3, b.data(), b.data() + 3);
    });
    t.duplicateVertices = std::adjacent_find(v.begin(), v.end()) != v.end();
    return t;
}

/// Largest distance between corresponding vertices, or -1 when the counts differ.
inline double maxVertexDifference(const TriangleMesh& a, const TriangleMesh& b) {
    if (a.vertices.size() != b.vertices.size())
        return -1.0;
    double d = 0.0;
    for (size_t i = 0; i < a.vertices.size(); ++i)
        d = std::max(d, double((a.vertices[i] - b.vertices[i]).norm()));
    return d;
}

} // namespace octo::test
