#include "rigid/MeshProperties.h"

#include "rigid/TriangleBvh.h"

#include <cmath>
#include <cstring>
#include <queue>
#include <sstream>
#include <unordered_map>

namespace octo {
namespace {

// Eberly's subexpressions for one coordinate w of the triangle's three vertices.
struct Sub {
    double f1, f2, f3, g0, g1, g2;
};
Sub subexpressions(double w0, double w1, double w2) {
    const double t0 = w0 + w1, t1 = w0 * w0, t2 = t1 + w1 * t0;
    Sub s;
    s.f1 = t0 + w2;
    s.f2 = t2 + w2 * s.f1;
    s.f3 = w0 * t1 + w1 * t2 + w2 * s.f2;
    s.g0 = s.f2 + w0 * (s.f1 + w0);
    s.g1 = s.f2 + w1 * (s.f1 + w1);
    s.g2 = s.f2 + w2 * (s.f1 + w2);
    return s;
}

uint64_t edgeKey(uint32_t a, uint32_t b) {
    return a < b ? (uint64_t(a) << 32) | b : (uint64_t(b) << 32) | a;
}

std::string edgeText(const TriangleMesh& m, uint32_t a, uint32_t b) {
    auto v = [&](uint32_t i) {
        const Vec3f& p = m.vertices[i];
        return "(" + std::to_string(p.x()) + ", " + std::to_string(p.y()) + ", " + std::to_string(p.z()) +
               ")";
    };
    return "between vertices " + std::to_string(a + 1) + " " + v(a) + " and " + std::to_string(b + 1) + " " +
           v(b);
}

/// Merges vertices with bit-identical positions (OBJ files split vertices at texture seams).
void weldIdentical(TriangleMesh& mesh) {
    struct Hash {
        size_t operator()(const std::array<uint32_t, 3>& k) const {
            return (size_t(k[0]) * 73856093u) ^ (size_t(k[1]) * 19349663u) ^ (size_t(k[2]) * 83492791u);
        }
    };
    std::unordered_map<std::array<uint32_t, 3>, uint32_t, Hash> index;
    index.reserve(mesh.vertices.size());
    std::vector<uint32_t> remap(mesh.vertices.size());
    std::vector<Vec3f> kept;
    kept.reserve(mesh.vertices.size());
    for (size_t i = 0; i < mesh.vertices.size(); ++i) {
        std::array<uint32_t, 3> key;
        Vec3f p = mesh.vertices[i] + Vec3f::Zero(); // -0 and +0 compare equal below: normalise
        for (int a = 0; a < 3; ++a) {
            if (p[a] == 0.0f)
                p[a] = 0.0f;
            std::memcpy(&key[a], &p[a], 4);
        }
        auto [it, inserted] = index.emplace(key, uint32_t(kept.size()));
        if (inserted)
            kept.push_back(mesh.vertices[i]);
        remap[i] = it->second;
    }
    if (kept.size() == mesh.vertices.size())
        return;
    for (auto& t : mesh.triangles)
        for (auto& i : t)
            i = remap[i];
    mesh.vertices.swap(kept);
    mesh.normals.clear();
}

} // namespace

double signedVolume(const TriangleMesh& mesh) {
    double v = 0.0;
    for (const auto& t : mesh.triangles) {
        const Vec3d a = mesh.vertices[t[0]].cast<double>(), b = mesh.vertices[t[1]].cast<double>(),
                    c = mesh.vertices[t[2]].cast<double>();
        v += a.dot(b.cross(c));
    }
    return v / 6.0;
}

MassProperties computeMassProperties(const TriangleMesh& mesh, double density) {
    // Integrate about a reference point inside the bounding box to keep the cancellation small.
    const Vec3d ref = meshBounds(mesh).center().cast<double>();
    double in[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (const auto& t : mesh.triangles) {
        const Vec3d p0 = mesh.vertices[t[0]].cast<double>() - ref,
                    p1 = mesh.vertices[t[1]].cast<double>() - ref,
                    p2 = mesh.vertices[t[2]].cast<double>() - ref;
        const Vec3d d = (p1 - p0).cross(p2 - p0);
        const Sub sx = subexpressions(p0.x(), p1.x(), p2.x());
        const Sub sy = subexpressions(p0.y(), p1.y(), p2.y());
        const Sub sz = subexpressions(p0.z(), p1.z(), p2.z());
        in[0] += d.x() * sx.f1;
        in[1] += d.x() * sx.f2;
        in[2] += d.y() * sy.f2;
        in[3] += d.z() * sz.f2;
        in[4] += d.x() * sx.f3;
        in[5] += d.y() * sy.f3;
        in[6] += d.z() * sz.f3;
        in[7] += d.x() * (p0.y() * sx.g0 + p1.y() * sx.g1 + p2.y() * sx.g2);
        in[8] += d.y() * (p0.z() * sy.g0 + p1.z() * sy.g1 + p2.z() * sy.g2);
        in[9] += d.z() * (p0.x() * sz.g0 + p1.x() * sz.g1 + p2.x() * sz.g2);
    }
    const double mult[10] = {1.0 / 6,  1.0 / 24, 1.0 / 24,  1.0 / 24,  1.0 / 60,
                             1.0 / 60, 1.0 / 60, 1.0 / 120, 1.0 / 120, 1.0 / 120};
    for (int i = 0; i < 10; ++i)
        in[i] *= mult[i];

    MassProperties mp;
    mp.volume = in[0];
    mp.mass = density * in[0];
    if (in[0] == 0.0)
        return mp;
    const Vec3d c(in[1] / in[0], in[2] / in[0], in[3] / in[0]); // relative to ref
    const double V = in[0];
    Mat3d I;
    I(0, 0) = in[5] + in[6] - V * (c.y() * c.y() + c.z() * c.z());
    I(1, 1) = in[4] + in[6] - V * (c.z() * c.z() + c.x() * c.x());
    I(2, 2) = in[4] + in[5] - V * (c.x() * c.x() + c.y() * c.y());
    I(0, 1) = I(1, 0) = -(in[7] - V * c.x() * c.y());
    I(1, 2) = I(2, 1) = -(in[8] - V * c.y() * c.z());
    I(0, 2) = I(2, 0) = -(in[9] - V * c.z() * c.x());
    mp.inertia = density * I;
    mp.centerOfMass = c + ref;
    return mp;
}

namespace {

/// Vertices and triangles present, coordinates finite, indices in range.
void checkVerticesAndIndices(const TriangleMesh& mesh, const std::string& name) {
    if (mesh.vertices.empty())
        throw InvalidMeshError(name + ": no vertices");
    if (mesh.triangles.empty())
        throw InvalidMeshError(name + ": no triangles");
    for (size_t i = 0; i < mesh.vertices.size(); ++i)
        if (!mesh.vertices[i].allFinite())
            throw InvalidMeshError(name + ": vertex " + std::to_string(i + 1) + " is not finite");
    for (size_t t = 0; t < mesh.triangles.size(); ++t)
        for (uint32_t i : mesh.triangles[t])
            if (i >= mesh.vertices.size())
                throw InvalidMeshError(name + ": triangle " + std::to_string(t + 1) + " uses vertex " +
                                       std::to_string(i + 1) + " of " + std::to_string(mesh.vertices.size()));
}

// Edge -> the (up to two) triangles using it: t0, t1, count.
using EdgeMap = std::unordered_map<uint64_t, std::array<uint32_t, 3>>;

EdgeMap buildEdgeMap(const TriangleMesh& mesh) {
    const size_t nt = mesh.triangles.size();
    EdgeMap edges;
    edges.reserve(nt * 2);
    for (uint32_t t = 0; t < nt; ++t)
        for (int k = 0; k < 3; ++k) {
            const uint32_t a = mesh.triangles[t][k], b = mesh.triangles[t][(k + 1) % 3];
            auto& e = edges[edgeKey(a, b)];
            if (e[2] < 2)
                e[e[2]] = t;
            ++e[2];
        }
    return edges;
}

/// Every edge must belong to exactly two triangles.
void checkClosedManifold(const TriangleMesh& mesh, const EdgeMap& edges, const std::string& name) {
    for (const auto& [key, e] : edges)
        if (e[2] != 2) {
            const uint32_t a = uint32_t(key >> 32), b = uint32_t(key & 0xffffffffu);
            if (e[2] == 1)
                throw InvalidMeshError(name + ": mesh is not closed: the edge " + edgeText(mesh, a, b) +
                                       " belongs to only one triangle (a hole)");
            throw InvalidMeshError(name + ": mesh is not a 2-manifold: the edge " + edgeText(mesh, a, b) +
                                   " is shared by " + std::to_string(e[2]) + " triangles");
        }
}

bool hasDirectedEdge(const TriangleMesh& mesh, uint32_t t, uint32_t a, uint32_t b) {
    const auto& tr = mesh.triangles[t];
    for (int k = 0; k < 3; ++k)
        if (tr[k] == a && tr[(k + 1) % 3] == b)
            return true;
    return false;
}

/// Breadth-first search over seed's connected component, flipping neighbours to match; returns the flips.
size_t orientComponent(TriangleMesh& mesh, EdgeMap& edges, std::vector<int8_t>& state, uint32_t seed,
                       const std::string& name) {
    size_t flipped = 0;
    state[seed] = 1;
    std::queue<uint32_t> queue;
    queue.push(seed);
    while (!queue.empty()) {
        const uint32_t t = queue.front();
        queue.pop();
        for (int k = 0; k < 3; ++k) {
            const uint32_t a = mesh.triangles[t][k], b = mesh.triangles[t][(k + 1) % 3];
            const auto& e = edges[edgeKey(a, b)];
            const uint32_t u = e[0] == t ? e[1] : e[0];
            const bool consistent = hasDirectedEdge(mesh, u, b, a);
            if (state[u]) {
                if (!consistent)
                    throw InvalidMeshError(name + ": mesh is not orientable: inconsistent triangles " +
                                           std::to_string(t + 1) + " and " + std::to_string(u + 1) +
                                           " at the edge " + edgeText(mesh, a, b));
                continue;
            }
            if (!consistent) {
                std::swap(mesh.triangles[u][1], mesh.triangles[u][2]);
                ++flipped;
            }
            state[u] = 1;
            queue.push(u);
        }
    }
    return flipped;
}

// Orientation: neighbours must traverse a shared edge in opposite directions. Propagate
// over each connected component by breadth-first search, flipping as needed.
void orientConsistently(TriangleMesh& mesh, EdgeMap& edges, const std::string& name) {
    const size_t nt = mesh.triangles.size();
    std::vector<int8_t> state(nt, 0); // 0 unvisited, 1 visited
    size_t flipped = 0;
    for (uint32_t seed = 0; seed < nt; ++seed) {
        if (state[seed])
            continue;
        flipped += orientComponent(mesh, edges, state, seed, name);
    }
    (void)flipped;
}

// Each component is now consistent; make each one outward (positive volume) separately.
// (One component is the common case; nested shells are not supported as solids.)
void orientOutward(TriangleMesh& mesh, const std::string& name, double minVolume) {
    double volume = signedVolume(mesh);
    const Aabb box = meshBounds(mesh);
    const double diag = double(box.extent().norm());
    const double threshold = std::max(minVolume, 1e-9 * diag * diag * diag);
    if (std::abs(volume) <= threshold)
        throw InvalidMeshError(name +
                               ": mesh encloses zero volume (|V| = " + std::to_string(std::abs(volume)) +
                               " m³ for a bounding box diagonal of " + std::to_string(diag) + " m)");
    if (volume < 0.0) {
        for (auto& t : mesh.triangles)
            std::swap(t[1], t[2]);
        for (auto& n : mesh.normals)
            n = -n;
    }
}

// A surface that crosses itself has no well-defined inside: the volume, the inertia, the
// inside test and the boundary samples are wrong, silently (issue 30).
void checkNoSelfIntersection(const TriangleMesh& mesh, const std::string& name) {
    if (const auto c = TriangleBvh(mesh).findSelfIntersection(mesh)) {
        std::ostringstream s;
        s.precision(4);
        s << name << ": mesh intersects itself: an edge of triangle " << c->edgeTriangle + 1
          << " crosses triangle " << c->crossedTriangle + 1 << " at (" << c->point.x() << ", " << c->point.y()
          << ", " << c->point.z()
          << ") (triangles counted after welding duplicate vertices); a body or fluid mesh must be one "
             "closed "
             "surface that does not cross itself";
        throw InvalidMeshError(s.str());
    }
}

} // namespace

void validateSolidMesh(TriangleMesh& mesh, const std::string& name, double minVolume) {
    checkVerticesAndIndices(mesh, name);
    if (!mesh.normals.empty() && mesh.normals.size() != mesh.vertices.size())
        mesh.normals.clear();
    weldIdentical(mesh);
    // Triangles with a repeated index have no area; their edges cancel in pairs, so dropping
    // them keeps a closed mesh closed.
    std::erase_if(mesh.triangles, [](const auto& t) { return t[0] == t[1] || t[1] == t[2] || t[2] == t[0]; });
    if (mesh.triangles.empty())
        throw InvalidMeshError(name + ": all triangles are degenerate");
    EdgeMap edges = buildEdgeMap(mesh);
    checkClosedManifold(mesh, edges, name);
    orientConsistently(mesh, edges, name);
    orientOutward(mesh, name, minVolume);
    checkNoSelfIntersection(mesh, name);
}

Aabb meshBounds(const TriangleMesh& mesh) {
    Aabb b;
    for (const auto& v : mesh.vertices)
        b.extend(v);
    return b;
}

double surfaceArea(const TriangleMesh& mesh) {
    double a = 0.0;
    for (const auto& t : mesh.triangles) {
        const Vec3d p0 = mesh.vertices[t[0]].cast<double>(), p1 = mesh.vertices[t[1]].cast<double>(),
                    p2 = mesh.vertices[t[2]].cast<double>();
        a += 0.5 * (p1 - p0).cross(p2 - p0).norm();
    }
    return a;
}

} // namespace octo
