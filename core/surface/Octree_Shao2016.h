#pragma once
// Adaptive octree of Shao, Liu & Wang, "An efficient surface reconstruction method for Lagrangian
// particle fluid", Journal of Graphics 37(5), 2016 (docs/ALGORITHMS.md §5).
//
// The root is a cube at the lattice origin with edge L 2^D. Every node holds the surface
// particles S lying in its box enlarged by l_S (the paper: l = R) and the fluid particles F in
// the box enlarged by R. Classes: exterior (S and F empty), interior (S empty, F not), surface
// (S not empty). Surface nodes are split into 8 children until depth D, so every surface leaf is
// a lattice cell of edge L and marching cubes over surface leaves has no cracks.
//
// S is kept explicitly (index lists, filtered top-down). F is only needed to tell interior from
// exterior (a surface node always has F not empty; asked only when the leaves are stored for
// drawing) and for the distance field at the corners, so it stays implicit: the neighbour grid
// enumerates it on demand. This keeps memory proportional
// to the surface.
//
// Parallel build: the top levels are expanded breadth-first with one task per node, below that
// every subtree runs serially in its own task with per-thread scratch lists. All buffers are
// members and keep their capacity from frame to frame (no per-frame allocation storm).
// Below the nodes at depth D - 3 (exactly the 8^3-cell blocks of BlockCornerField) the lists are
// not split further: the block's surface particles mark its surface cells in a bit mask, and the
// last three levels are read off the mask (blockSubtree).
//
// Without stored leaves the tree itself is not needed, only its surface leaves and counts. A cell
// is a surface leaf exactly when a surface particle lies in its enlarged box (a node's enlarged
// box is the union of its cells', in floating point too), so buildFromCells marks each surface
// particle's cells directly, with the same comparisons, and reads the node and leaf counts off
// the marked cells level by level: the same blocks and counts, without the top-down lists.
#include "spatial/NeighborGrid.h"
#include "surface/BlockCornerField.h"
#include "surface/SurfaceSettings.h"

#include <tbb/enumerable_thread_specific.h>

#include <span>
#include <vector>

namespace octo {

class Octree_Shao2016 {
public:
    struct Input {
        Lattice lattice;                         ///< root at lattice.origin, leaf edge lattice.cell
        int depth = 0;                           ///< D: root edge = cell * 2^D
        std::span<const Vec3f> surfacePositions; ///< S of the root
        float sEnlargement = 0.0f;               ///< l_S
        float fEnlargement = 0.0f;               ///< l_F (= R)
        const NeighborGrid* grid = nullptr;      ///< all fluid particles, for F
        std::span<const Vec3f> sortedPositions;  ///< in grid order
        bool storeLeaves = false;
    };
    struct Counts {
        uint64_t nodes = 0, leaves = 0, surfaceLeaves = 0, interiorLeaves = 0, exteriorLeaves = 0;
        uint64_t unclassifiedLeaves = 0; ///< non-surface leaves when !storeLeaves (class not needed)
    };

    /// Builds the tree; appends one CellBlock per block holding surface leaves to blocks (cleared
    /// first) and, when input.storeLeaves, every leaf with its class to leaves (cleared first).
    void build(const Input& input, std::vector<CellBlock>& blocks, std::vector<OctreeLeaf>& leaves);
    const Counts& counts() const { return counts_; }
    size_t bytes() const;

    /// Smallest D with cell * 2^D covering dims cells on every axis.
    static int depthFor(const Vec3i& dims);

private:
    struct ThreadCtx {
        std::vector<std::vector<uint32_t>> scratch; // S lists per depth
        std::vector<CellBlock> blocks;
        std::vector<OctreeLeaf> leaves;
        Counts counts;
    };
    struct TopNode {
        Vec3i coord;
        uint32_t list; // index into the level's list pool
    };

    // build()'s steps: clears the per-thread results and seeds the top pools with the root (all
    // surface particles); expands top level d into level d + 1 (one task per child); merges the
    // per-thread blocks, leaves and counts.
    void prepareTopLevels(int topDepth);
    /// The fast path (no stored leaves): false when the lattice's block grid is too large for it.
    bool buildFromCells(std::vector<CellBlock>& blocks);
    void countFromCells(const std::vector<CellBlock>& blocks);
    void expandTopLevel(int d);
    void collectResults(std::vector<CellBlock>& blocks, std::vector<OctreeLeaf>& leaves);
    void recurse(ThreadCtx& ctx, int depth, const Vec3i& coord, std::span<const uint32_t> S) const;
    void blockSubtree(ThreadCtx& ctx, const Vec3i& coord, std::span<const uint32_t> S) const;
    void subtreeFromCells(ThreadCtx& ctx, int depth, const Vec3i& coord, const Vec3i& local, int size,
                          const BlockMask& cells) const;
    void leaf(ThreadCtx& ctx, int depth, const Vec3i& coord, CellClass cls) const;
    void emptyLeaf(ThreadCtx& ctx, int depth, const Vec3i& coord) const; ///< S empty: interior/exterior
    bool anyFluidIn(const Vec3f& lo, const Vec3f& hi) const;
    void nodeBox(int depth, const Vec3i& coord, Vec3f& lo, Vec3f& hi) const;

    Input in_;
    int blockDepth_ = 0;
    Counts counts_;
    tbb::enumerable_thread_specific<ThreadCtx> tls_;
    std::vector<std::vector<std::vector<uint32_t>>> topLists_; // [level][node] S lists
    std::vector<std::vector<TopNode>> topNodes_;               // [level] surface nodes
    std::vector<BlockMask> dense_;                             // buildFromCells: per block of the lattice
    std::vector<uint64_t> levelKeys_;                          // countFromCells: nodes of one level
};

} // namespace octo
