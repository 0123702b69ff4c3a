#include "rigid/BoundarySampling.h"

#include "rigid/PointHash.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <unordered_set>

namespace octo {
namespace {

/// Calls f(point) for a barycentric grid over the triangle whose cells have edges <= step.
template <class F> void forEachProbe(const Vec3f& a, const Vec3f& b, const Vec3f& c, float step, F&& f) {
    const float longest = std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()});
    const int m = std::max(1, int(std::ceil(longest / step)));
    const Vec3f u = (b - a) / float(m), v = (c - a) / float(m);
    for (int i = 0; i <= m; ++i)
        for (int j = 0; i + j <= m; ++j)
            f(Vec3f(a + float(i) * u + float(j) * v));
}

/// Points strictly inside the segment [p, q] at spacing <= s (endpoints excluded).
template <class F> void forEachSegmentPoint(const Vec3f& p, const Vec3f& q, float s, F&& f) {
    const float len = (q - p).norm();
    const int n = int(std::ceil(len / s));
    for (int i = 1; i < n; ++i)
        f(Vec3f(p + (float(i) / float(n)) * (q - p)));
}

} // namespace

namespace {
/// Accepts candidate points at least minDist from every accepted one (Akinci et al. 2013).
struct SampleSet {
    PointHash hash;
    BoundarySamplingStats& st;
    float minDist;
    void offer(const Vec3f& p, size_t& counter) {
        ++st.candidates;
        if (!hash.anyWithin(p, minDist)) {
            hash.insert(p);
            ++counter;
        }
    }
};

/// 1. The vertices that triangles use.
void sampleVertices(const TriangleMesh& mesh, SampleSet& set) {
    const auto& V = mesh.vertices;
    std::vector<uint8_t> used(V.size(), 0);
    for (const auto& t : mesh.triangles)
        for (uint32_t i : t)
            used[i] = 1;
    for (size_t i = 0; i < V.size(); ++i)
        if (used[i])
            set.offer(V[i], set.st.vertexSamples);
}

/// 2. Points along the edges, each undirected edge once.
void sampleEdges(const TriangleMesh& mesh, float s, SampleSet& set) {
    const auto& V = mesh.vertices;
    std::unordered_set<uint64_t> done;
    done.reserve(mesh.triangles.size() * 2);
    for (const auto& t : mesh.triangles)
        for (int k = 0; k < 3; ++k) {
            const uint32_t a = std::min(t[k], t[(k + 1) % 3]), b = std::max(t[k], t[(k + 1) % 3]);
            if (!done.insert((uint64_t(a) << 32) | b).second)
                continue;
            forEachSegmentPoint(V[a], V[b], s, [&](const Vec3f& p) { set.offer(p, set.st.edgeSamples); });
        }
}

/// 3. Interior: scan lines parallel to the shortest edge (a, b), stepped toward the opposite
///    vertex c along the in-plane inward normal (Akinci et al. 2013).
void sampleInteriors(const TriangleMesh& mesh, float s, SampleSet& set) {
    const auto& V = mesh.vertices;
    for (const auto& t : mesh.triangles) {
        int k = 0;
        float shortest = std::numeric_limits<float>::max();
        for (int e = 0; e < 3; ++e) {
            const float len = (V[t[(e + 1) % 3]] - V[t[e]]).norm();
            if (len < shortest) {
                shortest = len;
                k = e;
            }
        }
        const Vec3f a = V[t[k]], b = V[t[(k + 1) % 3]], c = V[t[(k + 2) % 3]];
        const Vec3f ab = b - a;
        if (ab.squaredNorm() <= 0.0f)
            continue;
        const Vec3f u = ab.normalized();
        const Vec3f w = (c - a) - (c - a).dot(u) * u; // inward normal to ab within the plane
        const float height = w.norm();
        if (height <= 0.0f)
            continue;
        for (int line = 1; float(line) * s < height; ++line) {
            const float lambda = float(line) * s / height;
            const Vec3f p = a + lambda * (c - a), q = b + lambda * (c - b);
            forEachSegmentPoint(p, q, s, [&](const Vec3f& x) { set.offer(x, set.st.interiorSamples); });
            // Lines shorter than s have no inner point; their middle keeps thin tips covered.
            if ((q - p).norm() < s)
                set.offer(0.5f * (p + q), set.st.interiorSamples);
        }
    }
}

/// 4. Fill: probe every triangle; probes farther than fillThreshold r0 from every sample become
///    samples. Candidates are found in parallel (read-only), then inserted in order.
void fillHoles(const TriangleMesh& mesh, float r0, const BoundarySamplingOptions& opt, SampleSet& set) {
    const auto& V = mesh.vertices;
    const float fill2 = (opt.fillThreshold * r0) * (opt.fillThreshold * r0);
    const float probeStep = opt.probeSpacingFactor * r0;
    std::vector<std::vector<Vec3f>> holes(mesh.triangles.size());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, mesh.triangles.size()),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i != r.end(); ++i) {
                              const auto& t = mesh.triangles[i];
                              forEachProbe(V[t[0]], V[t[1]], V[t[2]], probeStep, [&](const Vec3f& p) {
                                  if (set.hash.nearestSquaredDistance(p) > fill2)
                                      holes[i].push_back(p);
                              });
                          }
                      });
    for (const auto& list : holes)
        for (const Vec3f& p : list)
            if (set.hash.nearestSquaredDistance(p) > fill2) {
                set.hash.insert(p);
                ++set.st.fillSamples;
            }
}
} // namespace

std::vector<Vec3f> sampleBoundary(const TriangleMesh& mesh, float r0, const BoundarySamplingOptions& opt,
                                  BoundarySamplingStats* stats, size_t maxSamples) {
    if (!(r0 > 0.0f))
        throw std::invalid_argument("sampleBoundary: spacing r0 must be positive");
    const float s = opt.latticeFactor * r0;
    double area = 0.0;
    for (const auto& t : mesh.triangles)
        area += 0.5 * (mesh.vertices[t[1]] - mesh.vertices[t[0]])
                          .cross(mesh.vertices[t[2]] - mesh.vertices[t[0]])
                          .norm();
    if (area / (double(r0) * r0) > double(maxSamples))
        throw std::invalid_argument("sampleBoundary: spacing " + std::to_string(r0) +
                                    " m is too small for a surface of " + std::to_string(area) + " m²");

    BoundarySamplingStats st;
    SampleSet set{PointHash(r0), st, opt.minSpacingFactor * r0};
    set.hash.reserve(size_t(2.0 * area / (double(s) * s)) + mesh.vertices.size() / 4 + 16);
    sampleVertices(mesh, set);
    sampleEdges(mesh, s, set);
    sampleInteriors(mesh, s, set);
    fillHoles(mesh, r0, opt, set);
    if (stats)
        *stats = st;
    return set.hash.points();
}

SamplingQuality measureSamplingQuality(const TriangleMesh& mesh, const std::vector<Vec3f>& samples, float r0,
                                       float probeSpacing) {
    SamplingQuality q;
    PointHash hash(r0);
    hash.reserve(samples.size());
    float minPair2 = std::numeric_limits<float>::infinity();
    for (const Vec3f& p : samples) {
        minPair2 = std::min(minPair2, hash.nearestSquaredDistance(p));
        hash.insert(p);
    }
    q.minPairDistance = std::sqrt(minPair2);
    std::vector<float> worst(mesh.triangles.size(), 0.0f);
    const auto& V = mesh.vertices;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, mesh.triangles.size()),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i != r.end(); ++i) {
                              const auto& t = mesh.triangles[i];
                              forEachProbe(V[t[0]], V[t[1]], V[t[2]], probeSpacing, [&](const Vec3f& p) {
                                  float d2 = hash.nearestSquaredDistance(p);
                                  if (!std::isfinite(d2)) { // nothing within one cell: brute force
                                      for (const Vec3f& s : samples)
                                          d2 = std::min(d2, (s - p).squaredNorm());
                                  }
                                  worst[i] = std::max(worst[i], std::sqrt(d2));
                              });
                          }
                      });
    for (float w : worst)
        q.maxCoverageDistance = std::max(q.maxCoverageDistance, w);
    return q;
}

} // namespace octo
