#include "scene/Scene.h"

#include "common/Parameters.h"
#include "io/FileRead.h"
#include "io/ParticleIo.h"
#include "scene/JsonFields.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
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

// Whole layers end within a layer of the box's max face. A box flush with the container's max
// wall only (not its min wall) is laid from that wall, half a spacing inside it like the wall shells,
// so that the fluid touches the wall it was drawn against (from min, a box 0.2 m wide at r = 8.5 mm
// left its last layer 21.5 mm from the wall, 13 mm beyond the contact); the remainder goes to the open side.
BoxLattice anchoredBoxLattice(const Aabb& box, const Aabb& container, const Vec3f& gravity, float r) {
    BoxLattice L = boxLattice(box, container, gravity, r);
    for (int a = 0; a < 3; ++a) {
        const float tol = 1e-4f * container.extent()[a];
        const bool atMin = box.min[a] <= container.min[a] + tol, atMax = box.max[a] >= container.max[a] - tol;
        if (atMax && !atMin && L.count[a] > 0)
            L.first[a] = container.max[a] - (float(L.count[a]) - 0.5f) * L.spacing[a];
    }
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
        const BoxLattice L = anchoredBoxLattice(b.box, container, gravity, r);
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

Aabb SceneDescription::filledBox(size_t i, float r) const {
    const Aabb& box = fluidBoxes.at(i).box;
    const BoxLattice L = anchoredBoxLattice(box, container, gravity, r);
    Aabb filled;
    filled.min = L.first - 0.5f * L.spacing;
    filled.max =
        filled.min + L.spacing.cwiseProduct(Vec3f(float(L.count[0]), float(L.count[1]), float(L.count[2])));
    return filled;
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

namespace {

// Wall particles of sampleBoxWalls(container, 2r, layers) (sph/BoundaryModel.cpp), without
// sampling them: the grid of points spanning `layers` shells minus its interior.
double wallParticleCount(const Aabb& container, float r, int layers) {
    const double d0 = 2.0 * double(r);
    double all = 1.0, inner = 1.0;
    for (int a = 0; a < 3; ++a) {
        const double n = std::max(1.0, std::round((double(container.extent()[a]) + d0) / d0));
        all *= n + 2.0 * layers - 1.0;
        inner *= std::max(0.0, n - 1.0);
    }
    return all - inner;
}

// Cells of a neighbour grid of edge h over the container (NeighborGrid rounds to 8^3 bricks).
double gridCellCount(const Aabb& container, float r, int layers) {
    const double h = 4.0 * double(r), wall = 2.0 * double(r) * layers;
    double cells = 1.0;
    for (int a = 0; a < 3; ++a)
        cells *=
            std::ceil((std::ceil((double(container.extent()[a]) + 2.0 * (h + wall)) / h) + 1.0) / 8.0) * 8.0;
    return cells;
}

} // namespace

uint64_t availableMemoryBytes() {
    if (const char* env = std::getenv("OCTO_MEMORY_BUDGET_MB")) {
        char* end = nullptr;
        const double mb = std::strtod(env, &end);
        if (end != env && *end == '\0' && mb > 0.0 && mb < 1e12)
            return uint64_t(mb * 1024.0 * 1024.0);
    }
    std::ifstream f("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    while (f >> key) {
        if (key == "MemAvailable:" && (f >> kib))
            return kib * 1024;
        std::getline(f, key);
    }
    return uint64_t(16) << 30; // unknown: assume 16 GiB
}

SceneBudget SceneDescription::budget(float r, int boundaryLayers) const {
    SceneBudget b;
    b.fluidParticles = double(estimateParticleCount(r));
    b.wallParticles = wallParticleCount(container, r, boundaryLayers);
    b.gridCells = gridCellCount(container, r, boundaryLayers);
    b.bytes = b.fluidParticles * kBytesPerFluidParticle + b.wallParticles * kBytesPerWallParticle +
              2.0 * b.gridCells * 4.0; // fluid and boundary grids: one uint32_t per cell each
    return b;
}

void SceneDescription::checkBudget(float r, int boundaryLayers) const {
    const std::string src = sourcePath.empty() ? name : sourcePath;
    checkFluidAt(r);
    const SceneBudget b = budget(r, boundaryLayers);
    const double memory = kMemoryShare * double(availableMemoryBytes());
    const double particles = b.fluidParticles + b.wallParticles;
    const bool tooMany = particles > double(kMaxParticles);
    const bool tooManyCells = b.gridCells > kMaxGridCells;
    if (!tooMany && !tooManyCells && b.bytes <= memory)
        return;
    std::ostringstream s;
    s.precision(3);
    s << src << ": fields 'particleRadius' (r = " << r << " m) and 'container' (["
      << container.min.transpose() << "] .. [" << container.max.transpose() << "] m) need about "
      << b.fluidParticles << " fluid + " << b.wallParticles
      << " wall particles (boundaryLayers = " << boundaryLayers << "), " << b.gridCells
      << " neighbour cells and " << b.bytes / double(1 << 20) << " MiB; limit ";
    if (tooMany)
        s << double(kMaxParticles) << " particles";
    else if (tooManyCells)
        s << kMaxGridCells << " neighbour cells";
    else
        s << memory / double(1 << 20) << " MiB (" << int(100 * kMemoryShare) << " % of the memory available)";
    s << ": choose a larger particleRadius (--radius, --particles) or a smaller container";
    throw SceneError(s.str());
}

void SceneDescription::checkFluidAt(float r) const {
    const std::string src = sourcePath.empty() ? name : sourcePath;
    // Two boxes whose lattices come closer than a spacing (boxes that touch, when one's layer count
    // rounds up past its side): from rest without gravity, two boxes touching at x = 0.3 m at
    // r = 0.02 m threw the fluid at 27 m/s in the first step.
    std::vector<Aabb> occupied;
    for (const FluidBox& b : fluidBoxes) {
        const BoxLattice L = anchoredBoxLattice(b.box, container, gravity, r);
        Aabb o;
        for (int a = 0; a < 3; ++a) {
            o.min[a] = L.first[a] - 0.5f * L.spacing[a];
            o.max[a] = L.first[a] + (float(L.count[a]) - 0.5f) * L.spacing[a];
        }
        occupied.push_back(o);
    }
    const float tol = 0.05f * r;
    for (size_t i = 0; i < occupied.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (((occupied[i].max.cwiseMin(occupied[j].max) - occupied[i].min.cwiseMax(occupied[j].min))
                     .array() > tol)
                    .all()) {
                std::ostringstream s;
                s << src << ": field 'fluidBoxes[" << i << "]' overlaps 'fluidBoxes[" << j
                  << "]' at particleRadius r = " << r
                  << " m (their particle lattices come closer than 2r; fluid shapes must not overlap: their "
                     "lattices would double the density; merge them into one)";
                throw SceneError(s.str());
            }
    for (size_t i = 0; i < fluidBoxes.size(); ++i) {
        const Aabb& box = fluidBoxes[i].box;
        if (boxLattice(box, container, gravity, r).size() == 0) {
            int a = 0;
            box.extent().minCoeff(&a);
            std::ostringstream s;
            s << src << ": field 'fluidBoxes[" << i
              << "]': the box holds no particle at particleRadius r = " << r << " m (it is "
              << box.extent()[a] << " m thin along "
              << "xyz"[a] << "; one layer needs at least r = " << r << " m)";
            throw SceneError(s.str());
        }
    }
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
    // Overlapping fluid shapes would put two lattices into one volume: twice the rest density,
    // and the start erupted at 8 000 m/s. Shapes that only touch are fine.
    const float overlapTol = 1e-5f * container.extent().maxCoeff();
    auto overlapFail = [&](const std::string& a, const std::string& b) {
        throw SceneError(src + ": field '" + a + "' overlaps '" + b +
                         "' (fluid shapes must not overlap: their lattices would double the density; "
                         "merge them into one)");
    };
    for (size_t i = 0; i < fluidBoxes.size(); ++i)
        for (size_t j = 0; j < i; ++j) {
            const Aabb &a = fluidBoxes[i].box, &b = fluidBoxes[j].box;
            if (((a.max.cwiseMin(b.max) - a.min.cwiseMax(b.min)).array() > overlapTol).all())
                overlapFail("fluidBoxes[" + std::to_string(i) + "]", "fluidBoxes[" + std::to_string(j) + "]");
        }
    for (size_t i = 0; i < fluidSpheres.size(); ++i) {
        const FluidSphere& si = fluidSpheres[i];
        for (size_t j = 0; j < i; ++j)
            if ((si.center - fluidSpheres[j].center).norm() < si.radius + fluidSpheres[j].radius - overlapTol)
                overlapFail("fluidSpheres[" + std::to_string(i) + "]",
                            "fluidSpheres[" + std::to_string(j) + "]");
        for (size_t j = 0; j < fluidBoxes.size(); ++j) {
            const Aabb& b = fluidBoxes[j].box;
            const Vec3f nearest = si.center.cwiseMax(b.min).cwiseMin(b.max);
            if ((si.center - nearest).norm() < si.radius - overlapTol)
                overlapFail("fluidSpheres[" + std::to_string(i) + "]",
                            "fluidBoxes[" + std::to_string(j) + "]");
        }
    }
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
    checkFluidAt(particleRadius);
}

json parseJsonChecked(const std::string& text, const std::string& source, const std::string& field) {
    const std::string where = source + (field.empty() ? "" : ": field '" + field + "'");
    // One frame per open object or array: its keys (objects) and its path, for messages.
    struct Open {
        bool object = false;
        std::set<std::string> keys;
        std::string path, lastKey;
        size_t index = 0;
    };
    std::vector<Open> open;
    auto childPath = [&]() -> std::string {
        if (open.empty())
            return field;
        const Open& o = open.back();
        if (o.object)
            return o.path.empty() ? o.lastKey : o.path + "." + o.lastKey;
        return o.path + "[" + std::to_string(o.index) + "]";
    };
    auto childDone = [&] {
        if (!open.empty() && !open.back().object)
            ++open.back().index;
    };
    const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
        switch (event) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start: {
            if (open.size() >= size_t(kMaxJsonDepth)) {
                const std::string at = childPath();
                throw SceneError(
                    where + ": JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels" +
                    (at.empty() ? "" : " at '" + (at.size() > 40 ? at.substr(0, 40) + "..." : at) + "'") +
                    " (limit " + std::to_string(kMaxJsonDepth) + ")");
            }
            Open o;
            o.object = event == json::parse_event_t::object_start;
            o.path = childPath();
            open.push_back(std::move(o));
            break;
        }
        case json::parse_event_t::key: {
            Open& o = open.back();
            o.lastKey = parsed.get<std::string>();
            if (!o.keys.insert(o.lastKey).second)
                throw SceneError(where + ": field '" + childPath() +
                                 "' is given twice in one object (keys must be unique)");
            break;
        }
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            open.pop_back();
            childDone();
            break;
        case json::parse_event_t::value:
            childDone();
            break;
        }
        return true;
    };
    try {
        return json::parse(text, check);
    } catch (const json::parse_error& e) {
        const auto [line, col] = lineColumn(text, e.byte);
        std::string what = e.what();
        // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: " prefix.
        if (auto p = what.find(": "); p != std::string::npos)
            what = what.substr(p + 2);
        throw SceneError(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                         (field.empty() ? "" : ": field '" + field + "'") + ": JSON syntax error: " + what);
    } catch (const json::exception& e) { // e.g. a number literal too large for a double (out_of_range.406)
        std::string what = e.what();
        if (auto p = what.find("] "); p != std::string::npos)
            what = what.substr(p + 2);
        throw SceneError(where + ": JSON error: " + what);
    }
}

namespace {

void readFluidBoxes(const Reader& top, SceneDescription& s, const std::string& sourceName) {
    const json& arr = top.at("fluidBoxes");
    if (!arr.is_array())
        top.fail("expected an array of boxes", "fluidBoxes");
    for (size_t i = 0; i < arr.size(); ++i) {
        const Reader b(arr[i], "fluidBoxes[" + std::to_string(i) + "]", sourceName);
        b.onlyKnown({"min", "max", "velocity"});
        s.fluidBoxes.push_back({b.box(), b.vec3("velocity", Vec3f::Zero())});
    }
}

void readFluidSpheres(const Reader& top, SceneDescription& s, const std::string& sourceName) {
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

FluidMesh readFluidMesh(const Reader& b, const SceneDescription& s, const std::string& sourceName) {
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
            b.fail("must equal 2 * particleRadius (the fluid lattice spacing), or be left out", "spacing");
    }
    return m;
}

void readFluidMeshes(const Reader& top, SceneDescription& s, const std::string& sourceName) {
    const json& arr = top.at("fluidMeshes");
    if (!arr.is_array())
        top.fail("expected an array of meshes", "fluidMeshes");
    for (size_t i = 0; i < arr.size(); ++i) {
        const Reader b(arr[i], "fluidMeshes[" + std::to_string(i) + "]", sourceName);
        s.fluidMeshes.push_back(readFluidMesh(b, s, sourceName));
    }
}

void readGravity(const Reader& top, SceneDescription& s) {
    s.gravity = top.vec3("gravity", s.gravity);
    for (int a = 0; a < 3; ++a) { // the simulation sets gravityX/Y/Z from it: same ranges, named here
        const ParameterInfo& g = *findParameter(std::string("gravity") + "XYZ"[a]);
        if (s.gravity[a] < g.minValue || s.gravity[a] > g.maxValue) {
            std::ostringstream m;
            m << "component "
              << "xyz"[a] << " = " << s.gravity[a] << " is out of range " << ParameterSet::rangeText(g)
              << " (parameter '" << g.name << "')";
            top.fail(m.str(), "gravity");
        }
    }
}

void readTiming(const Reader& top, SceneDescription& s) {
    s.endTime = top.number("endTime", s.endTime, true);
    s.fps = top.number("fps", s.fps, true);
    if (s.fps < kMinSceneFps || s.fps > kMaxSceneFps) { // as the CLI's --fps
        std::ostringstream m;
        m << "out of range [" << kMinSceneFps << ", " << kMaxSceneFps << "] (frames per simulated second)";
        top.fail(m.str(), "fps");
    }
}

/// Reads and validates "parameters"; returns the scene's restDensity (the default without them).
double readParameters(const Reader& top, SceneDescription& s, const std::string& sourceName) {
    double restDensity = findParameter("restDensity")->defaultValue;
    if (!top.has("parameters"))
        return restDensity;
    const Reader p(top.at("parameters"), "parameters", sourceName);
    ParameterSet check;
    for (const auto& [key, value] : p.obj().items()) {
        if (!value.is_number() && !value.is_boolean() && !value.is_string())
            p.fail("expected a number, boolean or choice name, got " + std::string(value.type_name()), key);
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
    restDensity = check.get(Param::restDensity);
    return restDensity;
}

/// A body moving at constant velocity must keep its centre in the container until endTime.
void checkBodyStaysInside(const Reader& top, const SceneDescription& s, const BodyDescription& body,
                          size_t i) {
    const KinematicMotion& m = body.kinematic;
    if (m.kind != KinematicMotion::Kind::Velocity || !(m.velocity.squaredNorm() > 0.0f))
        return;
    // A constant velocity leaves the container in finite time (one left it by 1.85 m
    // without a word): its centre must stay inside until endTime (a 'path' stops at
    // its last waypoint instead).
    double leave = std::numeric_limits<double>::infinity();
    for (int a = 0; a < 3; ++a) {
        const double v = m.velocity[a], x = body.position[a];
        if (v > 0.0)
            leave = std::min(leave, (double(s.container.max[a]) - x) / v);
        else if (v < 0.0)
            leave = std::min(leave, (double(s.container.min[a]) - x) / v);
    }
    if (leave < s.endTime) {
        std::ostringstream msg;
        msg << "the body's centre leaves the container at t = " << std::max(0.0, leave)
            << " s, before endTime = " << s.endTime
            << " s (a constant velocity never stops; give a 'path', which ends at its last "
               "waypoint)";
        top.fail(msg.str(), "bodies[" + std::to_string(i) + "].kinematic.velocity");
    }
}

/// A dynamic body's density must be within the allowed range relative to restDensity.
void checkBodyDensity(const Reader& top, const BodyDescription& body, size_t i, double restDensity) {
    const double rel = double(body.densityFor(float(restDensity))) / restDensity;
    // (1e-6: relativeDensity 0.05 read as a float is 0.0499999...)
    if (!(rel >= kMinRelativeBodyDensity * (1.0 - 1e-6) && rel <= kMaxRelativeBodyDensity * (1.0 + 1e-6))) {
        std::ostringstream m;
        m << rel << " rho0 is out of range [" << kMinRelativeBodyDensity << ", " << kMaxRelativeBodyDensity
          << "] rho0 (restDensity rho0 = " << restDensity << " kg/m^3)";
        top.fail(m.str(), "bodies[" + std::to_string(i) + "]." +
                              (body.density > 0.0f ? "density" : "relativeDensity"));
    }
}

void readBodies(const Reader& top, SceneDescription& s, const std::string& sourceName, double restDensity) {
    const json& b = top.at("bodies");
    if (!b.is_array())
        top.fail("expected an array", "bodies");
    // The tree is at most kMaxJsonDepth deep (parseJsonChecked), so dump() recurses boundedly.
    s.bodiesJson = b.dump();
    // Field and mesh errors at load, not at the first build.
    const std::vector<BodyDescription> bodies = parseBodiesJson(s.bodiesJson, sourceName);
    for (size_t i = 0; i < bodies.size(); ++i) {
        checkBodyStaysInside(top, s, bodies[i], i);
        if (bodies[i].isKinematic())
            continue;
        checkBodyDensity(top, bodies[i], i, restDensity);
    }
}

} // namespace

SceneDescription parseSceneJson(const std::string& text, const std::string& sourceName) {
    const json root = parseJsonChecked(text, sourceName);
    SceneDescription s;
    s.sourcePath = sourceName;
    const Reader top(root, "", sourceName);
    top.onlyKnown({"name", "description", "particleRadius", "container", "fluidBoxes", "fluidSpheres",
                   "gravity", "endTime", "fps", "parameters", "bodies", "fluidMeshes"});
    for (const char* list : {"fluidBoxes", "fluidSpheres", "fluidMeshes", "bodies"})
        if (top.has(list) && top.at(list).is_array() && top.at(list).size() > kMaxSceneArrayEntries)
            top.fail(std::to_string(top.at(list).size()) + " entries (limit " +
                         std::to_string(kMaxSceneArrayEntries) + ")",
                     list);
    s.name = top.string("name", sourceName);
    s.description = top.string("description", "");
    s.particleRadius = float(top.number("particleRadius", true));
    {
        const Reader c(top.at("container"), "container", sourceName);
        c.onlyKnown({"min", "max"});
        s.container = c.box();
    }
    if (top.has("fluidBoxes"))
        readFluidBoxes(top, s, sourceName);
    if (top.has("fluidSpheres"))
        readFluidSpheres(top, s, sourceName);
    if (top.has("fluidMeshes"))
        readFluidMeshes(top, s, sourceName);
    readGravity(top, s);
    readTiming(top, s);
    const double restDensity = readParameters(top, s, sourceName);
    if (top.has("bodies"))
        readBodies(top, s, sourceName, restDensity);
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
