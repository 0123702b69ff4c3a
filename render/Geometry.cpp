#include "render/Geometry.h"

#include <algorithm>
#include <cmath>

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

void octreeLines(const std::vector<OctreeNodeBox>& nodes, const RenderSettings& st,
                 std::vector<LineVertex>& out) {
    out.clear();
    for (const OctreeNodeBox& node : nodes) {
        const bool on = (node.cls == NodeClass::Surface && st.octreeSurface) ||
                        (node.cls == NodeClass::Interior && st.octreeInterior) ||
                        (node.cls == NodeClass::Exterior && st.octreeExterior);
        if (!on || node.depth < st.octreeMinDepth || node.depth > st.octreeMaxDepth)
            continue;
        const glm::vec3 lo(node.min.x(), node.min.y(), node.min.z());
        appendBoxLines(out, lo, lo + glm::vec3(node.edge), nodeClassColor(node.cls));
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
