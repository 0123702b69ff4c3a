#include "rigid/ShapeMeshes.h"

#include <cmath>
#include <map>
#include <numbers>
#include <stdexcept>

namespace octo {

TriangleMesh makeBoxMesh(const Vec3f& h) {
    if (!(h.array() > 0.0f).all())
        throw std::invalid_argument("box: half extents must be positive");
    TriangleMesh m;
    for (int i = 0; i < 8; ++i)
        m.vertices.emplace_back((i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 4) ? h.z() : -h.z());
    // Counter-clockwise seen from outside.
    const uint32_t quads[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (const auto& q : quads) {
        m.triangles.push_back({q[0], q[1], q[2]});
        m.triangles.push_back({q[0], q[2], q[3]});
    }
    return m;
}

TriangleMesh makeIcosphereMesh(float radius, int subdivisions) {
    if (!(radius > 0.0f))
        throw std::invalid_argument("sphere: radius must be positive");
    if (subdivisions < 0 || subdivisions > 8)
        throw std::invalid_argument("sphere: subdivisions must be in [0, 8]");
    const float t = (1.0f + std::sqrt(5.0f)) / 2.0f;
    TriangleMesh m;
    m.vertices = {{-1, t, 0},  {1, t, 0},  {-1, -t, 0}, {1, -t, 0}, {0, -1, t},  {0, 1, t},
                  {0, -1, -t}, {0, 1, -t}, {t, 0, -1},  {t, 0, 1},  {-t, 0, -1}, {-t, 0, 1}};
    m.triangles = {{0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                   {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
                   {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
    for (auto& v : m.vertices)
        v.normalize();
    for (int s = 0; s < subdivisions; ++s) {
        std::map<std::pair<uint32_t, uint32_t>, uint32_t> mid;
        auto midpoint = [&](uint32_t a, uint32_t b) {
            const auto key = std::minmax(a, b);
            auto it = mid.find(key);
            if (it != mid.end())
                return it->second;
            m.vertices.push_back((m.vertices[a] + m.vertices[b]).normalized());
            const uint32_t i = uint32_t(m.vertices.size() - 1);
            mid.emplace(key, i);
            return i;
        };
        std::vector<std::array<uint32_t, 3>> next;
        next.reserve(m.triangles.size() * 4);
        for (const auto& tr : m.triangles) {
            const uint32_t a = midpoint(tr[0], tr[1]), b = midpoint(tr[1], tr[2]), c = midpoint(tr[2], tr[0]);
            next.push_back({tr[0], a, c});
            next.push_back({tr[1], b, a});
            next.push_back({tr[2], c, b});
            next.push_back({a, b, c});
        }
        m.triangles.swap(next);
    }
    m.normals = m.vertices;
    for (auto& v : m.vertices)
        v *= radius;
    return m;
}

TriangleMesh makeCylinderMesh(float radius, float halfHeight, int segments) {
    if (!(radius > 0.0f) || !(halfHeight > 0.0f))
        throw std::invalid_argument("cylinder: radius and height must be positive");
    if (segments < 3)
        throw std::invalid_argument("cylinder: needs at least 3 segments");
    TriangleMesh m;
    const uint32_t n = uint32_t(segments);
    for (uint32_t i = 0; i < n; ++i) {
        const float a = 2.0f * std::numbers::pi_v<float> * float(i) / float(n);
        const float x = radius * std::cos(a), z = radius * std::sin(a);
        m.vertices.emplace_back(x, -halfHeight, z); // 2i: bottom ring
        m.vertices.emplace_back(x, halfHeight, z);  // 2i+1: top ring
    }
    const uint32_t bottom = 2 * n, top = 2 * n + 1;
    m.vertices.emplace_back(0.0f, -halfHeight, 0.0f);
    m.vertices.emplace_back(0.0f, halfHeight, 0.0f);
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t j = (i + 1) % n;
        const uint32_t b0 = 2 * i, t0 = 2 * i + 1, b1 = 2 * j, t1 = 2 * j + 1;
        // Angle grows from +x toward +z, so outward is (b0, t0, t1) order... checked by the volume sign.
        m.triangles.push_back({b0, t1, b1});
        m.triangles.push_back({b0, t0, t1});
        m.triangles.push_back({top, t1, t0});
        m.triangles.push_back({bottom, b0, b1});
    }
    return m;
}

} // namespace octo
