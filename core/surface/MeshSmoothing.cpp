#include "surface/MeshSmoothing.h"

#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>

namespace octo {

void MeshSmoother::buildAdjacency(const TriangleMesh& mesh) {
    // In a closed, consistently oriented mesh every neighbour b of a appears exactly once as a
    // directed edge a -> b of a triangle, so the outgoing edges are the one-ring without duplicates.
    const size_t nv = mesh.vertices.size();
    start_.assign(nv + 1, 0);
    for (const auto& t : mesh.triangles)
        for (uint32_t v : t)
            ++start_[v + 1];
    for (size_t v = 0; v < nv; ++v)
        start_[v + 1] += start_[v];
    adj_.resize(start_[nv]);
    fill_.assign(start_.begin(), start_.end() - 1);
    for (const auto& t : mesh.triangles)
        for (int k = 0; k < 3; ++k)
            adj_[fill_[t[size_t(k)]]++] = t[size_t((k + 1) % 3)];
}

double MeshSmoother::volume(const TriangleMesh& mesh) {
    return tbb::parallel_reduce(
               tbb::blocked_range<size_t>(0, mesh.triangles.size(), 8192), 0.0,
               [&](const tbb::blocked_range<size_t>& r, double v) {
                   for (size_t i = r.begin(); i < r.end(); ++i) {
                       const auto& t = mesh.triangles[i];
                       const Vec3d a = mesh.vertices[t[0]].cast<double>(),
                                   b = mesh.vertices[t[1]].cast<double>(),
                                   c = mesh.vertices[t[2]].cast<double>();
                       v += a.dot(b.cross(c));
                   }
                   return v;
               },
               std::plus<double>()) /
           6.0;
}

void MeshSmoother::smooth(TriangleMesh& mesh, std::span<const float> weights, int steps, float lambda) {
    if (mesh.vertices.empty() || steps <= 0)
        return;
    prepare(mesh);
    smoothPrepared(mesh, weights, steps, lambda);
}

void MeshSmoother::prepare(const TriangleMesh& mesh) {
    const size_t nv = mesh.vertices.size();
    buildAdjacency(mesh);
    // Small closed pieces (a drop of a few particles: tens of vertices, every one near every other)
    // would contract to a point under repeated Laplacian steps: they are not smoothed.
    component_.assign(nv, 0);
    smallPiece_.assign(nv, 0);
    stack_.clear();
    std::vector<uint32_t>& members = fill_; // reused: the current piece's vertices
    for (size_t seed = 0; seed < nv; ++seed) {
        if (component_[seed])
            continue;
        members.clear();
        component_[seed] = 1;
        stack_.push_back(uint32_t(seed));
        while (!stack_.empty()) {
            const uint32_t v = stack_.back();
            stack_.pop_back();
            members.push_back(v);
            for (uint32_t k = start_[v]; k < start_[v + 1]; ++k)
                if (!component_[adj_[k]]) {
                    component_[adj_[k]] = 1;
                    stack_.push_back(adj_[k]);
                }
        }
        if (members.size() < kMinPieceVertices)
            for (uint32_t v : members)
                smallPiece_[v] = 1;
    }
    volume0_ = volume(mesh);
}

void MeshSmoother::smoothPrepared(TriangleMesh& mesh, std::span<const float> weights, int steps,
                                  float lambda) {
    const size_t nv = mesh.vertices.size();
    if (nv == 0 || steps <= 0)
        return;
    weights_.assign(weights.begin(), weights.end());
    for (size_t v = 0; v < nv; ++v)
        if (smallPiece_[v])
            weights_[v] = 0.0f;
    const double v0 = volume0_;
    tmp_.resize(nv);
    auto step = [&](const std::vector<Vec3f>& from, std::vector<Vec3f>& to) {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, nv, 1024), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t v = r.begin(); v < r.end(); ++v) {
                const uint32_t b = start_[v], e = start_[v + 1];
                if (b == e || weights_[v] <= 0.0f) {
                    to[v] = from[v];
                    continue;
                }
                Vec3f sum = Vec3f::Zero();
                for (uint32_t k = b; k < e; ++k)
                    sum += from[adj_[k]];
                const Vec3f lap = sum / float(e - b) - from[v];
                to[v] = from[v] + (lambda * weights_[v]) * lap;
            }
        });
    };
    for (int it = 0; it < steps; ++it) {
        step(mesh.vertices, tmp_);
        mesh.vertices.swap(tmp_);
    }
    // Volume: move along w_v dV/dx_v by the first-order step that restores the volume;
    // dV/dx_v = sum of the incident faces' area vectors / 3 (= cross / 6).
    grad_.assign(nv, Vec3f::Zero());
    for (const auto& t : mesh.triangles) {
        const Vec3f n =
            (mesh.vertices[t[1]] - mesh.vertices[t[0]]).cross(mesh.vertices[t[2]] - mesh.vertices[t[0]]) /
            6.0f;
        for (uint32_t v : t)
            grad_[v] += n;
    }
    // A uniform offset t along the unit normals (scaled by the weight) changes the volume by
    // t sum w_v |dV/dx_v|: no vertex moves more because its triangles are larger.
    const double dv = v0 - volume(mesh);
    double g = 0.0;
    for (size_t v = 0; v < nv; ++v)
        g += double(weights_[v]) * double(grad_[v].norm());
    if (g > 0.0) {
        const float t = float(dv / g);
        tbb::parallel_for(tbb::blocked_range<size_t>(0, nv, 8192), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t v = r.begin(); v < r.end(); ++v) {
                const float len = grad_[v].norm();
                if (len > 0.0f)
                    mesh.vertices[v] += (t * weights_[v] / len) * grad_[v];
            }
        });
    }
}

size_t MeshSmoother::bytes() const {
    return (start_.capacity() + adj_.capacity() + fill_.capacity() + stack_.capacity()) * sizeof(uint32_t) +
           weights_.capacity() * sizeof(float) + component_.capacity() + smallPiece_.capacity() +
           (tmp_.capacity() + grad_.capacity()) * sizeof(Vec3f);
}

} // namespace octo
