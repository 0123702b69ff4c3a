#pragma once
// Scene descriptions: the container, the initial fluid, gravity, timing and parameter values
// of a simulation, read from JSON scene files (schema in docs/SCENES.md).
#include "common/Types.h"
#include "scene/SceneBodies.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace octo {

/// A scene file or description is invalid; the message names the file, the field (or the
/// line:column of a JSON syntax error) and the problem.
class SceneError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct FluidBox {
    Aabb box;                       // m, filled with a lattice of spacing 2r
    Vec3f velocity = Vec3f::Zero(); // m/s, initial
};

struct FluidSphere {
    Vec3f center = Vec3f::Zero();   // m
    float radius = 0.1f;            // m
    Vec3f velocity = Vec3f::Zero(); // m/s, initial
};

/// Fluid particles of the Interactive resolution (the GUI's default preset and `bench realtime`):
/// what runs live on two cores.
inline constexpr double kInteractiveParticleCount = 9000.0;

/// Scene frame rates, as the CLI's --fps (a scene's "fps": 1e-6 hung, 1e30 gave frames of 0 steps).
constexpr double kMinSceneFps = 1e-3, kMaxSceneFps = 1e6;
/// Most particles (fluid and wall) a simulation may hold, whatever the memory.
constexpr size_t kMaxParticles = 20'000'000;
/// Most cells of a neighbour grid over the container (NeighborGrid's own limit is 2^31).
constexpr double kMaxGridCells = double(uint64_t(1) << 31);
/// Memory per particle of a running simulation with its surface, rounded up from the dam break
/// (`run --particles 50000` vs `200000`: +113 MB peak for +153 k fluid and +84 k wall particles).
constexpr double kBytesPerFluidParticle = 700.0, kBytesPerWallParticle = 100.0;
/// Share of the memory available at build time a simulation may plan to use.
constexpr double kMemoryShare = 0.8;
/// Bytes of memory available now (MemAvailable; OCTO_MEMORY_BUDGET_MB overrides it, for tests).
uint64_t availableMemoryBytes();

/// What a scene costs at a particle radius, estimated without sampling anything.
struct SceneBudget {
    double fluidParticles = 0, wallParticles = 0, gridCells = 0, bytes = 0;
};

struct SceneDescription {
    std::string name;
    std::string description;
    std::string sourcePath;                       // file it was read from ("" when built in code)
    float particleRadius = 0.01f;                 // m
    Aabb container{Vec3f::Zero(), Vec3f::Ones()}; // closed box of boundary particles around the fluid
    std::vector<FluidBox> fluidBoxes;
    std::vector<FluidSphere> fluidSpheres;
    std::vector<FluidMesh> fluidMeshes;        ///< closed OBJ interiors sampled as fluid (SceneBodies.h)
    Vec3f gravity = Vec3f(0.0f, -9.81f, 0.0f); // m/s^2
    double endTime = 5.0;                      // s, simulated
    double fps = 60.0;                         // frames per simulated second
    /// Parameter values by name (validated against the parameter table when parsed), in file order.
    std::vector<std::pair<std::string, std::string>> parameters;
    /// The raw JSON text of the "bodies" array, kept for the rigid-body loader ("" when absent).
    std::string bodiesJson;

    /// Total fluid volume of boxes and spheres (m^3).
    double fluidVolume() const;
    /// Radius that gives about n fluid particles on the 2r lattice (the Interactive preset asks for
    /// kInteractiveParticleCount).
    float radiusForParticleCount(double n) const;
    /// Lattice samples (spacing 2r) of all fluid boxes and spheres, with initial velocities.
    void sampleFluid(float radius, std::vector<Vec3f>& positions, std::vector<Vec3f>& velocities) const;
    /// Number of particles sampleFluid would produce (without allocating them).
    size_t estimateParticleCount(float radius) const;
    /// The region fluid box `i` fills at this radius: whole layers of cells of volume (2r)^3, so
    /// along the free axis (gravity's) it ends within half a layer of the box's face (0.25 m at
    /// r = 8.5 mm in a 1.5 x 0.35 m pool fills 0.2421 m: 14 layers of 17.3 mm). A body floats at
    /// its draft below this level, not below the box's top.
    Aabb filledBox(size_t i, float radius) const;
    /// Throws SceneError when the geometry is inconsistent (fluid outside the container, fluid
    /// shapes that overlap, a box too thin for one layer ...).
    void validate() const;
    /// Particles, neighbour cells and bytes a simulation at radius r would take.
    SceneBudget budget(float r, int boundaryLayers) const;
    /// Throws SceneError naming the fields and the estimate when the scene at radius r exceeds
    /// kMaxParticles (fluid and wall particles), kMaxGridCells or kMemoryShare of the available
    /// memory, or a fluid box holds no particle at r. Called before anything is sampled.
    void checkBudget(float r, int boundaryLayers) const;
    /// Throws SceneError when a fluid box holds no particle at radius r.
    void checkFluidAt(float r) const;
};

/// Parses scene JSON. sourceName appears in error messages (a file name).
SceneDescription parseSceneJson(const std::string& text, const std::string& sourceName = "scene");
/// Largest scene file loadSceneFile reads (the built-in scenes are ~2 KB).
constexpr uint64_t kMaxSceneFileBytes = uint64_t(16) << 20;
/// Reads and parses a scene file; throws SceneError naming the path when it cannot be read, is
/// not a regular file (/dev/zero, a FIFO) or is larger than kMaxSceneFileBytes.
SceneDescription loadSceneFile(const std::string& path);

} // namespace octo
