#pragma once
// An indexed triangle mesh: used for rigid-body shapes, surface reconstruction output and file I/O.
#include "common/Types.h"
#include <array>
#include <vector>

namespace octo {

struct TriangleMesh {
    std::vector<Vec3f> vertices;
    std::vector<Vec3f> normals; ///< per vertex; empty or same size as vertices
    /// Per vertex, empty or same size as vertices: the fluid's velocity there (a surface mesh gets
    /// it interpolated from the particles' velocities, SurfaceReconstructor).
    std::vector<Vec3f> velocities;
    std::vector<std::array<uint32_t, 3>> triangles;

    void clear() {
        vertices.clear();
        normals.clear();
        velocities.clear();
        triangles.clear();
    }
    bool empty() const { return triangles.empty(); }
};

} // namespace octo
