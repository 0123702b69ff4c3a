#include "rigid/TriangleBvh.h"

#include "rigid/MeshProperties.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace octo {
namespace {
constexpr uint32_t kLeafSize = 4;

/// Slab test; returns the entry distance or +inf when the ray misses the box within [0, maxT].
inline float rayBox(const Aabb& b, const Vec3f& o, const Vec3f& invDir, float maxT) {
    float t0 = 0.0f, t1 = maxT;
    for (int a = 0; a < 3; ++a) {
        float tn = (b.min[a] - o[a]) * invDir[a];
        float tf = (b.max[a] - o[a]) * invDir[a];
        if (tn > tf)
            std::swap(tn, tf);
        // NaN (0 * inf when the origin lies on the slab plane) must not reject: use the fmax/fmin idiom.
        t0 = tn > t0 ? tn : t0;
        t1 = tf < t1 ? tf : t1;
        if (t0 > t1)
            return std::numeric_limits<float>::infinity();
    }
    return t0;
}
} // namespace

TriangleBvh::TriangleBvh(const TriangleMesh& mesh) {
    const size_t n = mesh.triangles.size();
    a_.resize(n);
    e1_.resize(n);
    e2_.resize(n);
    std::vector<Vec3f> centroids(n);
    for (size_t t = 0; t < n; ++t) {
        const auto& tr = mesh.triangles[t];
        const Vec3f& p0 = mesh.vertices[tr[0]];
        const Vec3f& p1 = mesh.vertices[tr[1]];
        const Vec3f& p2 = mesh.vertices[tr[2]];
        a_[t] = p0;
        e1_[t] = p1 - p0;
        e2_[t] = p2 - p0;
        centroids[t] = (p0 + p1 + p2) / 3.0f;
        bounds_.extend(p0);
        bounds_.extend(p1);
        bounds_.extend(p2);
    }
    if (n == 0)
        return;
    order_.resize(n);
    for (uint32_t t = 0; t < n; ++t)
        order_[t] = t;
    nodes_.reserve(2 * n / kLeafSize + 2);
    nodes_.emplace_back();
    build(0, 0, uint32_t(n), centroids);
}

void TriangleBvh::build(uint32_t self, uint32_t first, uint32_t count, const std::vector<Vec3f>& centroids) {
    Aabb box, cbox;
    for (uint32_t k = first; k < first + count; ++k) {
        const uint32_t t = order_[k];
        box.extend(a_[t]);
        box.extend(a_[t] + e1_[t]);
        box.extend(a_[t] + e2_[t]);
        cbox.extend(centroids[t]);
    }
    nodes_[self].box = box;
    const Vec3f ext = cbox.extent();
    int axis = 0;
    if (ext.y() > ext[axis])
        axis = 1;
    if (ext.z() > ext[axis])
        axis = 2;
    if (count <= kLeafSize || ext[axis] <= 0.0f) {
        nodes_[self].first = first;
        nodes_[self].count = count;
        return;
    }
    // Median split along the longest centroid axis.
    const uint32_t mid = first + count / 2;
    std::nth_element(order_.begin() + first, order_.begin() + mid, order_.begin() + first + count,
                     [&](uint32_t x, uint32_t y) { return centroids[x][axis] < centroids[y][axis]; });
    const uint32_t left = uint32_t(nodes_.size());
    nodes_.emplace_back();
    nodes_.emplace_back();
    nodes_[self].first = left;
    nodes_[self].count = 0;
    build(left, first, mid - first, centroids);
    build(left + 1, mid, first + count - mid, centroids);
}

template <class F>
void TriangleBvh::traverse(const Vec3f& origin, const Vec3f& invDir, float maxT, F&& visit) const {
    if (nodes_.empty())
        return;
    uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& node = nodes_[stack[--top]];
        if (rayBox(node.box, origin, invDir, maxT) == std::numeric_limits<float>::infinity())
            continue;
        if (node.count > 0) {
            for (uint32_t k = node.first; k < node.first + node.count; ++k)
                maxT = visit(order_[k], maxT);
        } else if (top + 2 <= 64) {
            stack[top++] = node.first + 1;
            stack[top++] = node.first;
        }
    }
}

namespace {
/// Möller-Trumbore; returns t (or -1 when missed). Uses double for the determinant tests.
inline float intersect(const Vec3f& o, const Vec3f& d, const Vec3f& a, const Vec3f& e1, const Vec3f& e2) {
    const Vec3d dd = d.cast<double>(), E1 = e1.cast<double>(), E2 = e2.cast<double>();
    const Vec3d p = dd.cross(E2);
    const double det = E1.dot(p);
    if (det == 0.0)
        return -1.0f;
    const double inv = 1.0 / det;
    const Vec3d s = (o - a).cast<double>();
    const double u = s.dot(p) * inv;
    if (u < 0.0 || u > 1.0)
        return -1.0f;
    const Vec3d q = s.cross(E1);
    const double v = dd.dot(q) * inv;
    if (v < 0.0 || u + v > 1.0)
        return -1.0f;
    return float(E2.dot(q) * inv);
}
inline Vec3f inverse(const Vec3f& d) {
    return {1.0f / d.x(), 1.0f / d.y(), 1.0f / d.z()}; // ±inf for zero components: the slab test copes
}
} // namespace

std::optional<RayHit> TriangleBvh::raycast(const Vec3f& origin, const Vec3f& dir, float maxT) const {
    std::optional<RayHit> best;
    traverse(origin, inverse(dir), maxT, [&](uint32_t t, float limit) {
        const float tt = intersect(origin, dir, a_[t], e1_[t], e2_[t]);
        if (tt >= 0.0f && tt <= limit) {
            best = RayHit{tt, t, origin + tt * dir};
            return tt;
        }
        return limit;
    });
    return best;
}

std::optional<TriangleBvh::Crossing> TriangleBvh::findSelfIntersection(const TriangleMesh& mesh) const {
    if (nodes_.empty())
        return std::nullopt;
    // Each edge as a segment from one vertex to the other, its ends trimmed by a relative 1e-4: a
    // triangle that shares a vertex with the edge is skipped (it meets the edge there), and the
    // two triangles along the edge contain it (their determinant is ~0: no crossing).
    constexpr float kTrim = 1e-4f;
    for (uint32_t t = 0; t < mesh.triangles.size(); ++t)
        for (int k = 0; k < 3; ++k) {
            const uint32_t i = mesh.triangles[t][k], j = mesh.triangles[t][(k + 1) % 3];
            if (i > j)
                continue; // each edge once (a closed mesh has it in two triangles)
            const Vec3f origin = mesh.vertices[i], dir = mesh.vertices[j] - origin;
            std::optional<Crossing> found;
            traverse(origin, inverse(dir), 1.0f, [&](uint32_t u, float limit) {
                const auto& tu = mesh.triangles[u];
                if (found || tu[0] == i || tu[1] == i || tu[2] == i || tu[0] == j || tu[1] == j || tu[2] == j)
                    return limit;
                const float tt = intersect(origin, dir, a_[u], e1_[u], e2_[u]);
                if (tt > kTrim && tt < 1.0f - kTrim) {
                    found = Crossing{t, u, origin + tt * dir};
                    return -1.0f; // no box is entered with a negative reach: the query ends
                }
                return limit;
            });
            if (found)
                return found;
        }
    return std::nullopt;
}

int TriangleBvh::countCrossings(const Vec3f& origin, const Vec3f& dir) const {
    int n = 0;
    traverse(origin, inverse(dir), std::numeric_limits<float>::max(), [&](uint32_t t, float limit) {
        if (intersect(origin, dir, a_[t], e1_[t], e2_[t]) > 0.0f)
            ++n;
        return limit;
    });
    return n;
}

bool TriangleBvh::contains(const Vec3f& p) const {
    if (nodes_.empty() || !bounds_.contains(p))
        return false;
    // Fixed, irrational-looking directions: a lattice point is unlikely to send two of them
    // through an edge or a vertex.
    static const Vec3f dirs[3] = {Vec3f(0.5773f, 0.6071f, 0.5461f).normalized(),
                                  Vec3f(-0.4471f, 0.2817f, 0.8491f).normalized(),
                                  Vec3f(0.3119f, -0.9287f, 0.2003f).normalized()};
    int inside = 0;
    for (int k = 0; k < 3; ++k) {
        inside += countCrossings(p, dirs[k]) & 1;
        if (inside >= 2)
            return true;
        if (inside + (2 - k) < 2)
            return false;
    }
    return inside >= 2;
}

namespace {
/// Squared distance from p to the triangle (a, a + e1, a + e2): the closest point by the Voronoi
/// regions of its vertices, edges and face (Ericson 2005, "Real-Time Collision Detection", 5.1.5).
float squaredDistanceToTriangle(const Vec3f& p, const Vec3f& a, const Vec3f& e1, const Vec3f& e2) {
    const Vec3f ap = p - a;
    const float d1 = e1.dot(ap), d2 = e2.dot(ap);
    if (d1 <= 0.0f && d2 <= 0.0f)
        return ap.squaredNorm(); // vertex a
    const Vec3f bp = ap - e1;
    const float d3 = e1.dot(bp), d4 = e2.dot(bp);
    if (d3 >= 0.0f && d4 <= d3)
        return bp.squaredNorm(); // vertex b
    const float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f)
        return (ap - (d1 / (d1 - d3)) * e1).squaredNorm(); // edge ab
    const Vec3f cp = ap - e2;
    const float d5 = e1.dot(cp), d6 = e2.dot(cp);
    if (d6 >= 0.0f && d5 <= d6)
        return cp.squaredNorm(); // vertex c
    const float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f)
        return (ap - (d2 / (d2 - d6)) * e2).squaredNorm(); // edge ac
    const float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
        const float w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (bp - w * (e2 - e1)).squaredNorm(); // edge bc
    }
    const float denom = 1.0f / (va + vb + vc);
    return (ap - (vb * denom) * e1 - (vc * denom) * e2).squaredNorm(); // face
}

float squaredDistanceToBox(const Aabb& b, const Vec3f& p) {
    return (p - p.cwiseMax(b.min).cwiseMin(b.max)).squaredNorm();
}
} // namespace

float TriangleBvh::distance(const Vec3f& p, float limit) const {
    float best = limit * limit;
    if (nodes_.empty() || squaredDistanceToBox(nodes_[0].box, p) >= best)
        return limit;
    uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& node = nodes_[stack[--top]];
        if (squaredDistanceToBox(node.box, p) >= best)
            continue;
        if (node.count > 0) {
            for (uint32_t k = node.first; k < node.first + node.count; ++k) {
                const uint32_t t = order_[k];
                best = std::min(best, squaredDistanceToTriangle(p, a_[t], e1_[t], e2_[t]));
            }
        } else if (top + 2 <= 64) {
            stack[top++] = node.first + 1;
            stack[top++] = node.first;
        }
    }
    return best < limit * limit ? std::sqrt(best) : limit;
}

std::vector<Vec3f> sampleInterior(const TriangleMesh& mesh, float spacing) {
    if (!(spacing > 0.0f))
        throw std::invalid_argument("sampleInterior: spacing must be positive");
    const TriangleBvh bvh(mesh);
    const Aabb box = bvh.bounds();
    if (box.empty())
        return {};
    Vec3i n;
    Vec3f start;
    for (int a = 0; a < 3; ++a) {
        n[a] = int(std::floor(box.extent()[a] / spacing)) + 1;
        start[a] = box.center()[a] - 0.5f * float(n[a] - 1) * spacing;
    }
    if (double(n.x()) * n.y() * n.z() > 2e8)
        throw std::invalid_argument("sampleInterior: spacing too small for the mesh");
    const int rows = n.y() * n.z();
    std::vector<std::vector<Vec3f>> perRow(static_cast<size_t>(rows));
    tbb::parallel_for(tbb::blocked_range<int>(0, rows), [&](const tbb::blocked_range<int>& r) {
        for (int row = r.begin(); row != r.end(); ++row) {
            const int iy = row % n.y(), iz = row / n.y();
            for (int ix = 0; ix < n.x(); ++ix) {
                const Vec3f p = start + spacing * Vec3f(float(ix), float(iy), float(iz));
                if (bvh.contains(p))
                    perRow[size_t(row)].push_back(p);
            }
        }
    });
    std::vector<Vec3f> out;
    for (auto& r : perRow)
        out.insert(out.end(), r.begin(), r.end());
    return out;
}

} // namespace octo
