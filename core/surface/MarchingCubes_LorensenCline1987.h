#pragma once
// Marching cubes case table (Lorensen & Cline 1987, "Marching cubes: a high resolution 3D surface
// construction algorithm", SIGGRAPH). Instead of typing the classic 256-entry table we generate it
// once from the corner signs with one fixed rule for ambiguous faces (the two inside corners of a
// face stay connected). Because that rule depends only on the face's own four corners, the two
// cells sharing a face always cut it the same way: the mesh is crack-free and 2-manifold, which
// the classic table does not guarantee for complementary cases.
//
// Conventions: cube corner i sits at offset (i & 1, (i >> 1) & 1, (i >> 2) & 1); corner i is
// inside when phi < 0 (bit i of the case index). Edge e in [0, 12) runs from corner
// edgeCorner(e) along axis edgeAxis(e) (edges 0-3 along x, 4-7 along y, 8-11 along z).
// Triangles are wound counter-clockwise seen from outside (normal towards phi > 0).
#include <array>
#include <cstddef>
#include <cstdint>

namespace octo {

struct MarchingCubesTable {
    /// For each case: triangle edge triples, terminated by -1 (at most 12 triangles).
    std::array<std::array<int8_t, 37>, 256> triangles{};
    std::array<uint16_t, 256> edgeMask{}; ///< crossing edges of each case
    std::array<uint8_t, 256> triangleCount{};
    std::array<uint8_t, 12> edgeCornerIdx{}; ///< lower corner of each edge
    std::array<uint8_t, 12> edgeAxisIdx{};

    int edgeCorner(int e) const { return edgeCornerIdx[std::size_t(e)]; }
    int edgeAxis(int e) const { return edgeAxisIdx[std::size_t(e)]; }
};

/// The table, generated on first use (thread-safe static).
const MarchingCubesTable& marchingCubesTable();

} // namespace octo
