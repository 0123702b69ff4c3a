#include "render/Geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace octo::render {

glm::vec4 nodeClassColor(NodeClass cls) {
    switch (cls) {
    case NodeClass::Surface:
        return {1.0f, 0.55f, 0.1f, 1.0f};
    case NodeClass::Interior:
        return {0.2f, 0.8f, 0.3f, 0.8f};
    case NodeClass::Exterior:
        return {0.55f, 0.55f, 0.6f, 0.5f};
    }
    return {1, 1, 1, 1};
}

glm::vec3 octreeDepthColor(int depth, int lo, int hi) {
    static const glm::vec3 stops[5] = {{0.25f, 0.55f, 1.0f},
                                       {0.55f, 0.45f, 1.0f},
                                       {0.95f, 0.40f, 0.70f},
                                       {1.0f, 0.62f, 0.25f},
                                       {1.0f, 0.92f, 0.35f}};
    float s = hi > lo ? float(depth - lo) / float(hi - lo) : 1.0f;
    s = std::clamp(s, 0.0f, 1.0f) * 4.0f;
    const int i = std::min(int(s), 3);
    return glm::mix(stops[i], stops[i + 1], s - float(i));
}

glm::vec3 bodyColor(int index) {
    static const glm::vec3 palette[8] = {{0.93f, 0.45f, 0.18f}, {0.85f, 0.22f, 0.35f}, {0.95f, 0.78f, 0.2f},
                                         {0.45f, 0.75f, 0.25f}, {0.65f, 0.4f, 0.85f},  {0.95f, 0.55f, 0.7f},
                                         {0.55f, 0.35f, 0.2f},  {0.9f, 0.9f, 0.88f}};
    return palette[((index % 8) + 8) % 8];
}

namespace {
/// Bits 0..20 of v moved to bits 0, 3, 6, ... (one coordinate of a 3D Morton code).
uint64_t mortonSpread(uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffull;
    v = (v | v << 16) & 0x1f0000ff0000ffull;
    v = (v | v << 8) & 0x100f00f00f00f00full;
    v = (v | v << 4) & 0x10c30c30c30c30c3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}
} // namespace

namespace {
bool passesFilter(const OctreeNodeBox& n, const OctreeFilter& filter) {
    return (filter.classMask >> int(n.cls) & 1) && n.depth >= filter.minDepth && n.depth <= filter.maxDepth &&
           n.edge > 0.0f;
}

/// The shown nodes' lattice: the lowest corner and the finest edge; the depth range of all nodes.
struct ShownNodes {
    Vec3f origin = Vec3f::Constant(std::numeric_limits<float>::max());
    float cell = std::numeric_limits<float>::max();
    size_t count = 0;
};
ShownNodes shownNodes(const std::vector<OctreeNodeBox>& nodes, const OctreeFilter& filter,
                      std::pair<int, int>& depthRange) {
    ShownNodes shown;
    int lo = 255, hi = 0;
    for (const OctreeNodeBox& n : nodes) {
        lo = std::min(lo, int(n.depth));
        hi = std::max(hi, int(n.depth));
        if (!passesFilter(n, filter))
            continue;
        ++shown.count;
        shown.origin = shown.origin.cwiseMin(n.min);
        shown.cell = std::min(shown.cell, n.edge);
    }
    depthRange = nodes.empty() ? std::pair{0, 0} : std::pair{lo, hi};
    return shown;
}

/// Sizes the edge hash for `shown` nodes; false when it would be too large to deduplicate.
bool prepareEdgeTable(OctreeEdgeScratch& scratch, size_t shown, size_t& tableSize) {
    tableSize = 1024;
    while (tableSize < 16 * shown) // > 12 edges per shown node: probing always ends
        tableSize *= 2;
    tableSize = std::max(tableSize, scratch.table.size()); // only grows: no page faults per rebuild
    const bool dedupe = tableSize <= (size_t(1) << 23);    // <= 128 MB; beyond, draw every edge
    if (dedupe && (scratch.table.size() != tableSize || ++scratch.generation == 0)) {
        scratch.table.assign(tableSize, {0, 0, 0, 0});
        scratch.generation = 1;
    }
    return dedupe;
}
} // namespace

void octreeEdges(const std::vector<OctreeNodeBox>& nodes, const OctreeFilter& filter,
                 OctreeEdgeScratch& scratch, std::vector<OctreeEdgeVertex>& out,
                 std::pair<int, int>& depthRange) {
    out.clear();
    const ShownNodes shownSet = shownNodes(nodes, filter, depthRange);
    const size_t shown = shownSet.count;
    const Vec3f origin = shownSet.origin;
    const float cell = shownSet.cell;
    if (shown == 0)
        return;
    // Node corners lie on a lattice of the finest shown edge from the lowest corner: an edge is
    // keyed by its integer start, axis and depth (19 bits per coordinate, 2 for the axis, 5 depth).
    constexpr int64_t kMaxCoord = (int64_t(1) << 19) - 2;
    size_t tableSize = 0;
    const bool dedupe = prepareEdgeTable(scratch, shown, tableSize);
    const uint16_t gen = scratch.generation;
    out.reserve(2 * 4 * shown);
    for (const OctreeNodeBox& n : nodes) {
        if (!passesFilter(n, filter))
            continue;
        int64_t c[3];
        bool onLattice = dedupe;
        for (int a = 0; a < 3; ++a) {
            c[a] = std::llround(double(n.min[a] - origin[a]) / cell);
            onLattice = onLattice && c[a] >= 0 && c[a] <= kMaxCoord;
        }
        const int64_t size = std::llround(double(n.edge) / cell);
        for (int a = 0; a < 3; ++a)
            for (int k = 0; k < 4; ++k) {
                const int b = (a + 1) % 3, d = (a + 2) % 3;
                int64_t s[3] = {c[0], c[1], c[2]};
                s[b] += (k & 1) * size;
                s[d] += (k >> 1) * size;
                Vec3f start = n.min;
                start[b] += float(k & 1) * n.edge;
                start[d] += float(k >> 1) * n.edge;
                Vec3f end = start;
                end[a] += n.edge;
                const float cls = float(int(n.cls));
                if (onLattice && s[b] <= kMaxCoord && s[d] <= kMaxCoord) {
                    const uint64_t key = uint64_t(s[0]) << 45 | uint64_t(s[1]) << 26 | uint64_t(s[2]) << 7 |
                                         uint64_t(a) << 5 | uint64_t(n.depth & 31);
                    // Morton order of the start: nodes come in octree order, so probes stay in cache.
                    size_t h = size_t(mortonSpread(uint64_t(s[0])) | mortonSpread(uint64_t(s[1])) << 1 |
                                      mortonSpread(uint64_t(s[2])) << 2) *
                                   3 +
                               size_t(a);
                    h &= tableSize - 1;
                    OctreeEdgeScratch::Slot* slot = &scratch.table[h];
                    while (slot->generation == gen && slot->key != key) {
                        h = (h + 1) & (tableSize - 1);
                        slot = &scratch.table[h];
                    }
                    if (slot->generation == gen) { // shared edge: drawn once, as bright as its brightest node
                        OctreeEdgeVertex* v = &out[slot->vertex];
                        v[0].cls = v[1].cls = std::max(v[0].cls, cls);
                        // Inside a block of shown cells (4 around it): hidden by the block's faces.
                        if (++slot->owners == 4 && filter.hull)
                            v[0].depth = v[1].depth = -1.0f;
                        continue;
                    }
                    *slot = {key, uint32_t(out.size()), 1, gen};
                }
                out.push_back({{start.x(), start.y(), start.z()}, float(n.depth), cls});
                out.push_back({{end.x(), end.y(), end.z()}, float(n.depth), cls});
            }
    }
    if (filter.hull)
        out.erase(
            std::remove_if(out.begin(), out.end(), [](const OctreeEdgeVertex& v) { return v.depth < 0.0f; }),
            out.end());
}

void floorShadow(const FrameSnapshot& f, int res, std::vector<float>& out) {
    out.assign(size_t(res) * res, 0.0f);
    const Aabb& d = f.domain;
    if (d.empty() || f.positions.empty())
        return;
    const float sx = float(res) / std::max(d.max.x() - d.min.x(), 1e-6f);
    const float sz = float(res) / std::max(d.max.z() - d.min.z(), 1e-6f);
    for (const Vec3f& p : f.positions) {
        const int i = std::clamp(int((p.x() - d.min.x()) * sx), 0, res - 1);
        const int k = std::clamp(int((p.z() - d.min.z()) * sz), 0, res - 1);
        out[size_t(k) * res + i] += 1.0f;
    }
    // Two box-blur passes (x then z, radius 2 cells): a soft penumbra instead of a pixel map.
    std::vector<float> tmp(out.size());
    for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < res; ++k)
            for (int i = 0; i < res; ++i) {
                float sum = 0.0f;
                for (int o = -2; o <= 2; ++o) {
                    const int a = std::clamp(pass == 0 ? i + o : k + o, 0, res - 1);
                    sum += pass == 0 ? out[size_t(k) * res + a] : out[size_t(a) * res + i];
                }
                tmp[size_t(k) * res + i] = sum / 5.0f;
            }
        out.swap(tmp);
    }
    // Normalise by a full column's count, so the darkening reads as water depth.
    float peak = 0.0f;
    for (float v : out)
        peak = std::max(peak, v);
    for (float& v : out)
        v = peak > 0.0f ? v / peak : 0.0f;
}

glm::vec3 colorRamp(float s) {
    // Piecewise-linear through five viridis samples: readable on dark and light backgrounds.
    static const glm::vec3 stops[5] = {{0.267f, 0.005f, 0.329f},
                                       {0.230f, 0.322f, 0.546f},
                                       {0.128f, 0.567f, 0.551f},
                                       {0.369f, 0.789f, 0.383f},
                                       {0.993f, 0.906f, 0.144f}};
    s = std::clamp(std::isfinite(s) ? s : 0.0f, 0.0f, 1.0f) * 4.0f;
    const int i = std::min(int(s), 3);
    return glm::mix(stops[i], stops[i + 1], s - float(i));
}

glm::vec3 waterRamp(float s) {
    static const glm::vec3 stops[3] = {{0.08f, 0.25f, 0.75f}, {0.15f, 0.65f, 0.95f}, {0.92f, 0.97f, 1.0f}};
    s = std::clamp(std::isfinite(s) ? s : 0.0f, 0.0f, 1.0f) * 2.0f;
    const int i = std::min(int(s), 1);
    return glm::mix(stops[i], stops[i + 1], s - float(i));
}

void particleColors(const FrameSnapshot& f, const RenderSettings& st, std::vector<glm::vec3>& out) {
    const size_t n = f.positions.size();
    out.resize(n);
    const glm::vec3 water(0.25f, 0.55f, 0.95f);
    const bool haveVel = f.velocities.size() == n, haveRho = f.densities.size() == n;
    const bool haveLambda = f.lambda.size() == n, haveFlag = f.surfaceFlag.size() == n;
    for (size_t i = 0; i < n; ++i) {
        glm::vec3 c = water;
        switch (st.colorMode) {
        case ColorMode::Uniform:
            break;
        case ColorMode::Velocity:
            if (haveVel)
                c = waterRamp(f.velocities[i].norm() / std::max(st.velocityMax, 1e-6f));
            break;
        case ColorMode::Density:
            // ±5 % around rho0: PCISPH keeps the error near eta, larger deviations stand out.
            if (haveRho)
                c = colorRamp(0.5f + (f.densities[i] / st.restDensity - 1.0f) * 10.0f);
            break;
        case ColorMode::Lambda:
            if (haveLambda)
                c = colorRamp(f.lambda[i]);
            break;
        case ColorMode::SurfaceFlag:
            if (haveFlag)
                c = f.surfaceFlag[i] ? glm::vec3(0.95f, 0.85f, 0.3f) : glm::vec3(0.2f, 0.35f, 0.75f);
            break;
        }
        if (st.highlightSurface && haveFlag && f.surfaceFlag[i])
            c = surfaceHighlightColor();
        out[i] = c;
    }
}

void appendBoxLines(std::vector<LineVertex>& out, const glm::vec3& lo, const glm::vec3& hi,
                    const glm::vec4& color) {
    const glm::vec3 c[8] = {{lo.x, lo.y, lo.z}, {hi.x, lo.y, lo.z}, {hi.x, hi.y, lo.z}, {lo.x, hi.y, lo.z},
                            {lo.x, lo.y, hi.z}, {hi.x, lo.y, hi.z}, {hi.x, hi.y, hi.z}, {lo.x, hi.y, hi.z}};
    static const int edges[12][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6},
                                     {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
    for (const auto& e : edges) {
        out.push_back({c[e[0]], color});
        out.push_back({c[e[1]], color});
    }
}

void floorAndBoxLines(const Aabb& domain, bool grid, bool box, std::vector<LineVertex>& out) {
    out.clear();
    if (domain.empty())
        return;
    const glm::vec3 lo(domain.min.x(), domain.min.y(), domain.min.z());
    const glm::vec3 hi(domain.max.x(), domain.max.y(), domain.max.z());
    if (grid) {
        // A floor twice the domain's footprint with ~1/10-of-extent spacing rounded to 1-2-5.
        const float extent = std::max(hi.x - lo.x, hi.z - lo.z);
        const float raw = extent / 10.0f;
        const float p10 = std::pow(10.0f, std::floor(std::log10(std::max(raw, 1e-6f))));
        const float spacing = raw / p10 < 2.0f ? p10 : raw / p10 < 5.0f ? 2.0f * p10 : 5.0f * p10;
        const glm::vec3 c = 0.5f * (lo + hi);
        const float half = std::ceil(extent / spacing) * spacing;
        const float x0 = std::floor((c.x - half) / spacing) * spacing,
                    z0 = std::floor((c.z - half) / spacing) * spacing;
        const int intervals = int(std::round(2.0f * half / spacing)) + 1;
        const glm::vec4 color(0.45f, 0.47f, 0.52f, 0.6f);
        const float y = lo.y - 1e-4f * extent;
        for (int k = 0; k <= intervals; ++k) {
            const float x = x0 + float(k) * spacing, z = z0 + float(k) * spacing;
            out.push_back({{x, y, z0}, color});
            out.push_back({{x, y, z0 + float(intervals) * spacing}, color});
            out.push_back({{x0, y, z}, color});
            out.push_back({{x0 + float(intervals) * spacing, y, z}, color});
        }
    }
    if (box)
        appendBoxLines(out, lo, hi, {0.85f, 0.88f, 0.95f, 0.9f});
}

std::vector<Vec3f> vertexNormals(const TriangleMesh& mesh) {
    if (mesh.normals.size() == mesh.vertices.size())
        return mesh.normals;
    std::vector<Vec3f> n(mesh.vertices.size(), Vec3f::Zero());
    for (const auto& t : mesh.triangles) {
        if (t[0] >= n.size() || t[1] >= n.size() || t[2] >= n.size())
            continue;
        const Vec3f& a = mesh.vertices[t[0]];
        const Vec3f face = (mesh.vertices[t[1]] - a).cross(mesh.vertices[t[2]] - a); // |face| = 2 area
        for (uint32_t k : t)
            n[k] += face;
    }
    for (auto& v : n) {
        const float len = v.norm();
        v = len > 0.0f ? Vec3f(v / len) : Vec3f(0, 1, 0);
    }
    return n;
}

} // namespace octo::render
