#pragma once
// Marching cubes case table (Lorensen & Cline 1987, "Marching cubes: a high resolution 3D surface
// construction algorithm", SIGGRAPH). Instead of typing the classic 256-entry table we generate it
// once from the corner signs, for every case and every way of resolving its ambiguous faces.
//
// Ambiguous faces (two diagonal inside corners, two outside) are resolved by the asymptotic
// decider (Nielson & Hamann, "The asymptotic decider", IEEE Visualization 1991): the inside
// corners are connected across the face when the bilinear interpolant's saddle is inside, i.e.
// phi_a phi_c > phi_b phi_d for inside diagonal (a, c) and outside diagonal (b, d). The test uses
// only the face's four corner values, which both cells sharing the face read from the same
// stored corners, so both cut the face the same way. We chose it over Lewiner et al.'s MC33
// tables (Chernyaev 1995) because face consistency is what makes the mesh manifold; MC33's extra
// interior cases (tunnels decided inside the cube) change only the topology inside a cell, cost
// a large hand-checked table, and the distance field has no sub-cell information that would make
// those decisions more right. Before this the table used a fixed "inside corners connected" rule,
// also consistent but it merged thin sheets and droplets that the interpolant keeps apart.
//
// Triangulation: each closed loop of face segments is a fan from a start vertex whose fan
// diagonals never lie in a cube face. A diagonal inside a face would be an edge of the mesh that
// the neighbouring cell can produce too; with both cells fanning across the same ambiguous face the
// edge ended up in four triangles (the non-manifold edges seen on real particle frames). Loops
// without such a start (which visit two ambiguous faces at every vertex) get an extra vertex at the
// mean of the loop's vertices, fanned around it (extraLoops names the loop's edges).
//
// Conventions: cube corner i sits at offset (i & 1, (i >> 1) & 1, (i >> 2) & 1); corner i is
// inside when phi < 0 (bit i of the case index). Edge e in [0, 12) runs from corner
// edgeCorner(e) along axis edgeAxis(e) (edges 0-3 along x, 4-7 along y, 8-11 along z). Triangle
// entries 12 + k refer to the entry's k-th extra vertex. Triangles are wound counter-clockwise
// seen from outside (normal towards phi > 0).
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace octo {

struct MarchingCubesTable {
    struct Entry {
        std::array<int8_t, 37> triangles{}; ///< triangle vertex triples, terminated by -1
        uint8_t triangleCount = 0;
        uint8_t extraCount = 0;               ///< extra (loop-centre) vertices
        std::array<uint16_t, 2> extraLoops{}; ///< edge mask of the loop around each extra vertex
    };
    std::array<uint16_t, 256> edgeMask{};                ///< crossing edges of each case
    std::array<uint8_t, 256> ambiguousFaces{};           ///< bit f: face f ambiguous (f = 2 axis + side)
    std::array<uint16_t, 256> entryBase{};               ///< first entry of each case
    std::vector<Entry> entries;                          ///< per case, 2^(ambiguous faces) entries
    std::array<std::array<uint8_t, 4>, 6> faceCorners{}; ///< cyclic corner order of face f
    std::array<uint8_t, 12> edgeCornerIdx{};             ///< lower corner of each edge
    std::array<uint8_t, 12> edgeAxisIdx{};

    int edgeCorner(int e) const { return edgeCornerIdx[std::size_t(e)]; }
    int edgeAxis(int e) const { return edgeAxisIdx[std::size_t(e)]; }

    /// The entry for case ci with corner values phi (phi[i] < 0 inside): the asymptotic decider on
    /// each ambiguous face picks the sub-entry.
    const Entry& entry(int ci, const float* phi) const {
        unsigned bits = 0, k = 0;
        for (unsigned m = ambiguousFaces[std::size_t(ci)]; m; m &= m - 1, ++k) {
            const auto& q = faceCorners[std::size_t(std::countr_zero(m))];
            // q[0], q[2] one diagonal, q[1], q[3] the other; q[0] inside or outside.
            const float d02 = phi[q[0]] * phi[q[2]], d13 = phi[q[1]] * phi[q[3]];
            const bool q0Inside = phi[q[0]] < 0.0f;
            const bool insideJoined = q0Inside ? d02 > d13 : d13 > d02;
            bits |= unsigned(insideJoined) << k;
        }
        return entries[std::size_t(entryBase[std::size_t(ci)]) + bits];
    }
};

/// The table, generated on first use (thread-safe static).
const MarchingCubesTable& marchingCubesTable();

} // namespace octo
