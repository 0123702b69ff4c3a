#pragma once
// An immutable picture of one simulation frame, published by the simulation worker (by swapping
// a shared_ptr<const FrameSnapshot>) and read by the renderer and the statistics panels.
// Plain data: no Qt, no GL, no pointers into solver state.
#include "common/TriangleMesh.h"
#include "common/Types.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace octo {

/// Octree node classes (docs/ALGORITHMS.md §5).
enum class NodeClass : uint8_t { Exterior = 0, Interior = 1, Surface = 2 };

struct OctreeNodeBox {
    Vec3f min;
    float edge = 0.0f;
    uint8_t depth = 0;
    NodeClass cls = NodeClass::Exterior;
};

struct BodySnapshot {
    int id = -1;
    std::string name;
    Mat3f rotation = Mat3f::Identity(); ///< body space -> world
    Vec3f translation = Vec3f::Zero();  ///< world position of the body-space origin (centre of mass)
    Vec3f velocity = Vec3f::Zero();
    float density = 0.0f;
    bool kinematic = false;
    std::shared_ptr<const TriangleMesh> mesh; ///< in body space; shared, never changes
};

struct FrameSnapshot {
    uint64_t frame = 0; ///< frames published since reset
    uint64_t step = 0;  ///< solver steps since reset
    double time = 0.0;  ///< simulated seconds

    // Fluid particles (same order in every array).
    std::vector<Vec3f> positions;
    std::vector<Vec3f> velocities;
    std::vector<float> densities;
    std::vector<float> pressures;
    std::vector<float> lambda;        ///< smallest eigenvalue of L (empty when surface is off)
    std::vector<uint8_t> surfaceFlag; ///< 1 = surface particle (empty when surface is off)

    std::vector<Vec3f> boundaryPositions; ///< walls and bodies
    std::vector<BodySnapshot> bodies;
    std::vector<OctreeNodeBox> octreeNodes; ///< leaves (and optionally inner nodes) with class
    TriangleMesh surfaceMesh;
    /// Simulated time and step of the frame whose surface (mesh, flags, octree) this is: the
    /// surface is rebuilt once per frame, the particles may be newer. -1: no surface.
    double surfaceTime = -1.0;
    uint64_t surfaceStep = 0;
    /// Changes with every new surface (frame, edit, reset): upload mesh / octree only then. 0: none.
    uint64_t surfaceSerial = 0;
    Aabb domain; ///< container box

    /// Named statistics in display order (#FP, #SP, #FPsurface, #Cube..., Tps, Tode, Tmc ...).
    std::vector<std::pair<std::string, double>> stats;
    std::string status; ///< non-empty: a problem (blow-up) the GUI should show

    double stat(const std::string& name, double fallback = 0.0) const {
        for (const auto& [n, v] : stats)
            if (n == name)
                return v;
        return fallback;
    }
};

using FrameSnapshotPtr = std::shared_ptr<const FrameSnapshot>;

} // namespace octo
