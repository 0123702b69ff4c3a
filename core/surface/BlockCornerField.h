#pragma once
// The corner store shared by every reconstruction method: the lattice of cells of edge L is cut
// into blocks of 8^3 cells; a block is addressed by its integer block coordinates (a hash keyed by
// integer corner coordinates at the finest level, two-level: block key -> dense 8^3 block). Each
// block owns the corners with local coordinates [0, 8)^3; the corners on a block's +x/+y/+z faces
// belong to the neighbouring blocks, which are created (cells empty) when needed. So each lattice
// corner is stored and evaluated at most once, whichever leaves or blocks share it.
//
// A method only decides which cells are active (bit masks per block); the corner masks, the
// distance evaluation and marching cubes are the same for all methods, which makes their meshes
// identical wherever their cell sets cover the zero level set.
#include "common/TriangleMesh.h"
#include "common/Types.h"

#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <vector>

namespace octo {

struct MarchingCubesTable;

/// Set bits of w. The x86-64 baseline has no POPCNT instruction (std::popcount then calls
/// libgcc): there, the bit-parallel count inline.
inline int bitCount(uint64_t w) {
#if defined(__POPCNT__) || !(defined(__x86_64__) || defined(__i386__))
    return std::popcount(w);
#else
    w = w - ((w >> 1) & 0x5555555555555555ull);
    w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
    w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return int((w * 0x0101010101010101ull) >> 56);
#endif
}

/// Cells (i, j, k), i in [0, dims.x), at origin + (i, j, k) * cell; corners likewise.
struct Lattice {
    Vec3f origin = Vec3f::Zero();
    float cell = 1.0f;
    Vec3i dims{0, 0, 0};
    Vec3f corner(int64_t i, int64_t j, int64_t k) const {
        return origin + Vec3f(float(i) * cell, float(j) * cell, float(k) * cell);
    }
    uint64_t cellCount() const { return uint64_t(dims.x()) * uint64_t(dims.y()) * uint64_t(dims.z()); }
};

/// 512 cells or corners, bit = x + 8 y + 64 z (word z, bit x + 8 y).
using BlockMask = std::array<uint64_t, 8>;

/// Block key: bx | by << 21 | bz << 42 (block coordinates < 2^21).
inline uint64_t blockKey(uint32_t bx, uint32_t by, uint32_t bz) {
    return uint64_t(bx) | (uint64_t(by) << 21) | (uint64_t(bz) << 42);
}
inline Vec3i blockCoords(uint64_t key) {
    return Vec3i(int(key & 0x1FFFFFu), int((key >> 21) & 0x1FFFFFu), int((key >> 42) & 0x1FFFFFu));
}

struct CellBlock {
    uint64_t key = 0;
    BlockMask cells{};
};

class BlockCornerField {
public:
    /// phi at a world position; called in parallel.
    using PhiFn = std::function<float(const Vec3f&)>;

    /// Takes the active cells (blocks may come in any order, keys unique). Adds the neighbour
    /// blocks that own corners of active cells and marks the corners needed.
    void setCells(const Lattice& lattice, std::vector<CellBlock>& blocks);
    /// Evaluates phi at every needed corner, in parallel over blocks. evalBlock(blockIndex) may
    /// be given instead to batch a block's neighbour search; see evaluateBlocks.
    void evaluate(
        const std::function<void(const Vec3i& blockOrigin, const BlockMask& corners, float* phi)>& evalBlock);
    /// Welded marching cubes over the active cells. Vertices ordered by (block key, edge), then the
    /// block's loop-centre vertices in cell order, so two methods producing the same crossing
    /// edges produce identical vertex arrays. Every active cell is a lattice cell (the octree's
    /// surface leaves are all at the finest level), so there are no T-junctions or transition
    /// faces: each face is shared by at most two cells, which read the same four stored corners.
    void marchingCubes(TriangleMesh& mesh, bool computeNormals);

    uint64_t corners() const { return corners_; }
    size_t blockCount() const { return keys_.size(); }
    const Lattice& lattice() const { return lattice_; }
    /// Bytes held (capacities) by the buffers.
    size_t bytes() const;

private:
    int32_t findBlock(uint64_t key) const;
    // marchingCubes' passes.
    void markInsideCorners();
    BlockMask crossingCells(size_t b) const;
    void markCrossingEdges(const MarchingCubesTable& table);
    void numberVerticesAndTriangles();
    uint32_t writeEdgeVertices(size_t b, const Vec3i& g0, TriangleMesh& mesh) const;
    void writeCellTriangles(const MarchingCubesTable& table, size_t b, const Vec3i& g0, uint32_t v,
                            TriangleMesh& mesh) const;

    Lattice lattice_;
    std::vector<uint64_t> keys_; // sorted
    std::vector<BlockMask> cells_, cornerMask_;
    std::vector<std::array<int32_t, 8>> nbr_;        // block at offset (dx | dy << 1 | dz << 2), -1 absent
    std::vector<float> phi_;                         // 512 per block
    std::vector<BlockMask> inside_, crossing_;       // corners with phi < 0; cells the surface crosses
    std::vector<std::array<uint64_t, 24>> edgeMask_; // bit = corner * 3 + axis
    std::vector<std::array<uint32_t, 24>> edgePrefix_;
    std::vector<uint32_t> vertexBase_, triBase_, triCount_, extraCount_;
    std::vector<uint64_t> scratchKeys_;
    std::vector<CellBlock> scratchBlocks_;
    uint64_t corners_ = 0;
};

} // namespace octo
