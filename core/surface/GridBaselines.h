#pragma once
// The comparison baselines of docs/ALGORITHMS.md §8, as cell sets on the shared lattice (same phi,
// same marching cubes, see BlockCornerField):
//  - UniformGrid_Solenthaler2007: every cell of the fluid's bounding box (Solenthaler, Schläfli &
//    Pajarola, CAVW 2007; the paper's "CAVW_2007").
//  - NarrowBand_Akinci2012: cells whose box enlarged by l holds a surface particle, found by
//    splatting each surface particle (Akinci, Ihmsen, Akinci, Solenthaler & Teschner, "Parallel
//    surface reconstruction for particle-based fluids", CGF 2012; the paper's "CGF_2012"). With
//    l = R this is the same cell set as the octree's surface leaves, found without a tree.
//  - SparseGrid_Splashsurf: every 8^3-cell block whose box meets the R-box of any particle, all
//    cells of it (the dense-subdomain sparse grid splashsurf switched to from its octree). Every
//    corner within R of a particle is in such a block and corners outside have phi = +R, so its
//    mesh equals the uniform grid's.
#include "surface/BlockCornerField.h"

#include <span>
#include <vector>

namespace octo {

/// Dense per-block scratch over the lattice's block grid, reused between frames.
struct DenseBlockScratch {
    std::vector<BlockMask> masks;
    std::vector<uint8_t> flags;
    size_t bytes() const { return masks.capacity() * sizeof(BlockMask) + flags.capacity(); }
};

struct UniformGrid_Solenthaler2007 {
    static void cells(const Lattice& lattice, std::vector<CellBlock>& blocks);
};

struct NarrowBand_Akinci2012 {
    static void cells(const Lattice& lattice, std::span<const Vec3f> surfacePositions, float enlargement,
                      DenseBlockScratch& scratch, std::vector<CellBlock>& blocks);
};

struct SparseGrid_Splashsurf {
    static void cells(const Lattice& lattice, std::span<const Vec3f> sortedPositions, float kernelRadius,
                      DenseBlockScratch& scratch, std::vector<CellBlock>& blocks);
};

/// Block-grid dimensions of a lattice; throws std::length_error when it would exceed maxBlocks.
Vec3i blockGridDims(const Lattice& lattice, uint64_t maxBlocks, const char* method);

} // namespace octo
