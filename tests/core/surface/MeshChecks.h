#pragma once
// Mesh topology helpers for the surface tests.
#include "common/TriangleMesh.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>

namespace octo::test {

struct MeshTopology {
    bool closedManifold = false; ///< every edge in exactly two triangles, opposite directions
    bool duplicateVertices = false;
    bool finite = true; ///< every vertex coordinate finite
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
    for (const Vec3f& p : m.vertices)
        t.finite = t.finite && p.allFinite();
    // Welded: no two vertices at the same position.
    std::vector<Vec3f> v = m.vertices;
    std::sort(v.begin(), v.end(), [](const Vec3f& a, const Vec3f& b) {
        return std::lexicographical_compare(a.data(), a.data() + 3, b.data(), b.data() + 3);
    });
    t.duplicateVertices = std::adjacent_find(v.begin(), v.end()) != v.end();
    return t;
}

/// Largest distance between corresponding vertices; +infinity when the counts differ or a
/// distance is not finite (so that a "<= tolerance" check fails).
inline double maxVertexDifference(const TriangleMesh& a, const TriangleMesh& b) {
    if (a.vertices.size() != b.vertices.size())
        return std::numeric_limits<double>::infinity();
    double d = 0.0;
    for (size_t i = 0; i < a.vertices.size(); ++i) {
        const double di = double((a.vertices[i] - b.vertices[i]).norm());
        if (!std::isfinite(di))
            return std::numeric_limits<double>::infinity();
        d = std::max(d, di);
    }
    return d;
}

} // namespace octo::test
