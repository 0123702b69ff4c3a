#include "scene/Scene.h"

#include "common/Parameters.h"
#include "io/FileRead.h"
#include "io/ParticleIo.h"
#include "scene/JsonFields.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <numbers>
#include <set>
#include <sstream>

namespace octo {

using json = nlohmann::json;

namespace {

using Reader = JsonFields;

std::pair<size_t, size_t> lineColumn(const std::string& text, size_t byte) {
    // nlohmann reports the 1-based byte count read when the error was detected.
    size_t line = 1, col = 1;
    const size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
    for (size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return {line, col};
}

std::string valueText(const json& v) {
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_boolean())
        return v.get<bool>() ? "true" : "false";
    std::ostringstream s;
    s.precision(17);
    s << v.get<double>();
    return s.str();
}

// Layers of a fluid box along one axis: the nearest whole number of spacings, so a box keeps its
// size to within half a spacing (0.55 m at 18.33 mm: 30 layers, not 29), but never more layers
// than fit between the box's min side and the container wall (`room`), so a box flush with a
// wall does not put particles into it.
int latticeCount(float extent, float spacing, float room) {
    const int nearest = int(std::lround(double(extent) / double(spacing)));
    const int fit = int(std::floor(double(room) / double(spacing) + 1e-3));
    return std::max(0, std::min(nearest, fit));
}

// The lattice of one fluid box. Along an axis where the box spans the container from wall to wall,
// the layers are spread to fill it exactly (spacing extent / n, the outer layers half a spacing
// from each wall, like the wall shells): a lattice of spacing 2r leaves a gap of up to one spacing
// at the far wall, and the column slumps into it at every step of the start. That gap was the
// eruption from rest at fine radii (issue 9; tank 0.15 m wide at r = 4.25 mm, gap 0.65 * 2r: the
// edge particles of the gap corner reached 4.2 m/s in 5 frames, 0.75 m/s without the gap). So
// that the density stays rho0, the stretched cell volume is given back along one free axis,
// preferably the one along gravity (the free surface moves by at most half a layer).
struct BoxLattice {
    int count[3] = {0, 0, 0};
    Vec3f spacing = Vec3f::Zero(), first = Vec3f::Zero();
    size_t size() const { return size_t(count[0]) * size_t(count[1]) * size_t(count[2]); }
};

BoxLattice boxLattice(const Aabb& box, const Aabb& container, const Vec3f& gravity, float r) {
    const float d0 = 2.0f * r;
    const Vec3f ext = box.extent(), room = container.max - box.min;
    BoxLattice L;
    bool wallToWall[3];
    float stretchedVolume = 1.0f;
    int nStretched = 0;
    for (int a = 0; a < 3; ++a) {
        const float tol = 1e-4f * container.extent()[a];
        wallToWall[a] = box.min[a] <= container.min[a] + tol && box.max[a] >= container.max[a] - tol;
        const int n = wallToWall[a] ? int(std::lround(double(ext[a]) / double(d0))) : 0;
        if (n >= 1) {
            L.count[a] = n;
            L.spacing[a] = ext[a] / float(n);
            L.first[a] = box.min[a] + 0.5f * L.spacing[a];
            stretchedVolume *= L.spacing[a];
            ++nStretched;
        } else {
            wallToWall[a] = false;
            L.count[a] = latticeCount(ext[a], d0, room[a]);
            L.spacing[a] = d0;
            L.first[a] = box.min[a] + r; // r inside min: a box on the floor continues the wall lattice
        }
    }
    if (nStretched == 0)
        return L;
    int free = -1; // the axis that gives back the volume: along gravity if it is free
    gravity.cwiseAbs().maxCoeff(&free);
    // A box that fills the container along all three axes (a closed tank full of water) cannot keep
    // d0^3 cells with all three stretched: the axis along gravity keeps whole cells and leaves its
    // gap (under one layer) at the top. Stretched on all three, a 0.35 m tank at r = 12 mm got
    // 15 layers of 23.3 mm, 9 % too dense in a closed box, and erupted at 1 000 m/s in frame 1.
    if (wallToWall[free] && nStretched < 3)
        free = !wallToWall[0] ? 0 : (!wallToWall[1] ? 1 : 2);
    // Cell volume d0^3: the free axis's spacing times the other two axes' spacings.
    float others = 1.0f;
    for (int a = 0; a < 3; ++a)
        if (a != free)
            others *= L.spacing[a];
    const float sf = d0 * d0 * d0 / others;
    const float fit = std::floor(room[free] / sf + 1e-3f);
    L.spacing[free] = sf;
    L.count[free] = std::max(0, int(std::min<double>(std::lround(double(ext[free]) / double(sf)), fit)));
    L.first[free] = box.min[free] + 0.5f * sf;
    return L;
}

} // namespace

double SceneDescription::fluidVolume() const {
    double v = 0.0;
    for (const FluidBox& b : fluidBoxes)
        v += double(b.box.extent().prod());
    for (const FluidSphere& s : fluidSpheres)
        v += 4.0 / 3.0 * std::numbers::pi * std::pow(double(s.radius), 3.0);
    for (const FluidMesh& m : fluidMeshes)
        v += m.volume;
    return v;
}

float SceneDescription::radiusForParticleCount(double n) const {
    if (!(n >= 1.0))
        throw SceneError(name + ": particle count must be >= 1");
    const double v = fluidVolume();
    if (!(v > 0.0))
        throw SceneError(name + ": the scene has no fluid volume");
    return float(0.5 * std::cbrt(v / n));
}

void SceneDescription::sampleFluid(float r, std::vector<Vec3f>& positions,
                                   std::vector<Vec3f>& velocities) const {
    positions.clear();
    velocities.clear();
    const float d0 = 2.0f * r;
    for (const FluidBox& b : fluidBoxes) {
        const BoxLattice L = boxLattice(b.box, container, gravity, r);
        for (int k = 0; k < L.count[2]; ++k)
            for (int j = 0; j < L.count[1]; ++j)
                for (int i = 0; i < L.count[0]; ++i) {
                    positions.push_back(L.first +
                                        L.spacing.cwiseProduct(Vec3f(float(i), float(j), float(k))));
                    velocities.push_back(b.velocity);
                }
    }
    for (const FluidSphere& s : fluidSpheres) {
        const int n = int(std::ceil(s.radius / d0));
        for (int k = -n; k <= n; ++k)
            for (int j = -n; j <= n; ++j)
                for (int i = -n; i <= n; ++i) {
                    const Vec3f off = d0 * Vec3f(float(i), float(j), float(k));
                    if (off.norm() < s.radius) {
                        positions.push_back(s.center + off);
                        velocities.push_back(s.velocity);
                    }
                }
    }
    for (const FluidMesh& m : fluidMeshes) {
        const std::vector<Vec3f> pts = sampleFluidMesh(m, r);
        positions.insert(positions.end(), pts.begin(), pts.end());
        velocities.insert(velocities.end(), pts.size(), m.velocity);
    }
}

size_t SceneDescription::estimateParticleCount(float r) const {
    const float d0 = 2.0f * r;
    size_t n = 0;
    for (const FluidBox& b : fluidBoxes) {
        n += boxLattice(b.box, container, gravity, r).size();
    }
    for (const FluidSphere& s : fluidSpheres)
        n += size_t(4.0 / 3.0 * std::numbers::pi * std::pow(double(s.radius / d0), 3.0)) + 1;
    for (const FluidMesh& m : fluidMeshes)
        n += size_t(m.volume / double(d0 * d0 * d0)) + 1;
    return n;
}

void SceneDescription::validate() const {
    const std::string src = sourcePath.empty() ? name : sourcePath;
    if (!(particleRadius > 0.0f))
        throw SceneError(src + ": field 'particleRadius': must be > 0");
    if (container.empty() || !((container.max.array() > container.min.array()).all()))
        throw SceneError(src + ": field 'container': 'max' must exceed 'min'");
    for (size_t i = 0; i < fluidMeshes.size(); ++i) {
        const Aabb b = fluidMeshBounds(fluidMeshes[i]);
        if (!container.enlarged(1e-5f).contains(b.min) || !container.enlarged(1e-5f).contains(b.max))
            throw SceneError(src + ": field 'fluidMeshes[" + std::to_string(i) +
                             "]': the mesh must lie inside the container");
    }
    if (fluidBoxes.empty() && fluidSpheres.empty() && fluidMeshes.empty())
        throw SceneError(src + ": the scene has no fluid (give 'fluidBoxes' or 'fluidSpheres')");
    const float tol = 1e-5f;
    for (size_t i = 0; i < fluidBoxes.size(); ++i)
        if (!container.enlarged(tol).contains(fluidBoxes[i].box.min) ||
            !container.enlarged(tol).contains(fluidBoxes[i].box.max))
            throw SceneError(src + ": field 'fluidBoxes[" + std::to_string(i) +
                             "]': the box must lie inside the container");
    for (size_t i = 0; i < fluidSpheres.size(); ++i) {
        const FluidSphere& s = fluidSpheres[i];
        if (!container.enlarged(tol).contains(s.center - Vec3f::Constant(s.radius)) ||
            !container.enlarged(tol).contains(s.center + Vec3f::Constant(s.radius)))
            throw SceneError(src + ": field 'fluidSpheres[" + std::to_string(i) +
                             "]': the sphere must lie inside the container");
    }
    if (!(endTime > 0.0))
        throw SceneError(src + ": field 'endTime': must be > 0");
    if (!(fps > 0.0))
        throw SceneError(src + ": field 'fps': must be > 0");
}

SceneDescription parseSceneJson(const std::string& text, const std::string& sourceName) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& e) {
        const auto [line, col] = lineColumn(text, e.byte);
        std::string what = e.what();
        // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: " prefix.
        if (auto p = what.find(": "); p != std::string::npos)
            what = what.substr(p + 2);
        throw SceneError(sourceName + ":" + std::to_string(line) + ":" + std::to_string(col) +
                         ": JSON syntax error: " + what);
    } catch (const json::exception& e) { // e.g. a number literal too large for a double (out_of_range.406)
        std::string what = e.what();
        if (auto p = what.find("] "); p != std::string::npos)
            what = what.substr(p + 2);
        throw SceneError(sourceName + ": JSON error: " + what);
    }
    SceneDescription s;
    s.sourcePath = sourceName;
    const Reader top(root, "", sourceName);
    top.onlyKnown({"name", "description", "particleRadius", "container", "fluidBoxes", "fluidSpheres",
                   "gravity", "endTime", "fps", "parameters", "bodies", "fluidMeshes"});
    s.name = top.string("name", sourceName);
    s.description = top.string("description", "");
    s.particleRadius = float(top.number("particleRadius", true));
    {
        const Reader c(top.at("container"), "container", sourceName);
        c.onlyKnown({"min", "max"});
        s.container = c.box();
    }
    if (top.has("fluidBoxes")) {
        const json& arr = top.at("fluidBoxes");
        if (!arr.is_array())
            top.fail("expected an array of boxes", "fluidBoxes");
        for (size_t i = 0; i < arr.size(); ++i) {
            const Reader b(arr[i], "fluidBoxes[" + std::to_string(i) + "]", sourceName);
            b.onlyKnown({"min", "max", "velocity"});
            s.fluidBoxes.push_back({b.box(), b.vec3("velocity", Vec3f::Zero())});
        }
    }
    if (top.has("fluidSpheres")) {
        const json& arr = top.at("fluidSpheres");
        if (!arr.is_array())
            top.fail("expected an array of spheres", "fluidSpheres");
        for (size_t i = 0; i < arr.size(); ++i) {
            const Reader b(arr[i], "fluidSpheres[" + std::to_string(i) + "]", sourceName);
            b.onlyKnown({"center", "radius", "velocity"});
            s.fluidSpheres.push_back(
                {b.vec3("center"), float(b.number("radius", true)), b.vec3("velocity", Vec3f::Zero())});
        }
    }
    if (top.has("fluidMeshes")) {
        const json& arr = top.at("fluidMeshes");
        if (!arr.is_array())
            top.fail("expected an array of meshes", "fluidMeshes");
        for (size_t i = 0; i < arr.size(); ++i) {
            const Reader b(arr[i], "fluidMeshes[" + std::to_string(i) + "]", sourceName);
            b.onlyKnown({"mesh", "position", "scale", "velocity", "spacing"});
            FluidMesh m;
            if (!b.at("mesh").is_string())
                b.fail("expected a path string", "mesh");
            try {
                m.meshPath = resolveMeshPath(b.at("mesh").get<std::string>(), sourceName);
                m.position = b.vec3("position");
                m.scale = float(b.number("scale", 1.0, true));
                m.velocity = b.vec3("velocity", Vec3f::Zero());
                measureFluidMesh(m);
            } catch (const SceneError&) {
                throw;
            } catch (const std::exception& e) {
                b.fail(e.what(), "mesh");
            }
            if (b.has("spacing")) {
                const double sp = b.number("spacing", true);
                if (std::abs(sp - 2.0 * s.particleRadius) > 1e-6 * sp)
                    b.fail("must equal 2 * particleRadius (the fluid lattice spacing), or be left out",
                           "spacing");
            }
            s.fluidMeshes.push_back(std::move(m));
        }
    }
    s.gravity = top.vec3("gravity", s.gravity);
    s.endTime = top.number("endTime", s.endTime, true);
    s.fps = top.number("fps", s.fps, true);
    if (top.has("parameters")) {
        const Reader p(top.at("parameters"), "parameters", sourceName);
        ParameterSet check;
        for (const auto& [key, value] : p.obj().items()) {
            if (!value.is_number() && !value.is_boolean() && !value.is_string())
                p.fail("expected a number, boolean or choice name, got " + std::string(value.type_name()),
                       key);
            const std::string v = valueText(value);
            try {
                check.setFromString(key, v);
            } catch (const ParameterError& e) {
                p.fail(e.what(), key);
            }
            s.parameters.emplace_back(key, v);
        }
        try {
            check.validate();
        } catch (const ParameterError& e) {
            p.fail(e.what());
        }
    }
    if (top.has("bodies")) {
        const json& b = top.at("bodies");
        if (!b.is_array())
            top.fail("expected an array", "bodies");
        s.bodiesJson = b.dump();
        parseBodiesJson(s.bodiesJson, sourceName); // field and mesh errors at load, not at the first build
    }
    const ParameterInfo* rInfo = findParameter("particleRadius");
    if (rInfo && (s.particleRadius < rInfo->minValue || s.particleRadius > rInfo->maxValue))
        top.fail("out of range " + ParameterSet::rangeText(*rInfo), "particleRadius");
    s.validate();
    return s;
}

SceneDescription loadSceneFile(const std::string& path) {
    std::string text;
    try {
        text = readRegularFile(path, kMaxSceneFileBytes, "scene file");
    } catch (const FileFormatError& e) {
        throw SceneError(e.what());
    }
    return parseSceneJson(text, path);
}

} // namespace octo
