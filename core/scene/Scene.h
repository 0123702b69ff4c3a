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
    /// Throws SceneError when the geometry is inconsistent (fluid outside the container ...).
    void validate() const;
};

/// Parses scene JSON. sourceName appears in error messages (a file name).
SceneDescription parseSceneJson(const std::string& text, const std::string& sourceName = "scene");
/// Largest scene file loadSceneFile reads (the built-in scenes are ~2 KB).
constexpr uint64_t kMaxSceneFileBytes = uint64_t(16) << 20;
/// Reads and parses a scene file; throws SceneError naming the path when it cannot be read, is
/// not a regular file (/dev/zero, a FIFO) or is larger than kMaxSceneFileBytes.
SceneDescription loadSceneFile(const std::string& path);

} // namespace octo
