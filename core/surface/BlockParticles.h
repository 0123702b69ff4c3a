#pragma once
// The particles near one block of 8^3 distance-field corners (BlockCornerField), copied once per
// block and bucketed into 8 x 8 (z, y) slabs of the block's box. A group of corners then finds its
// candidates in a few contiguous ranges (one per z slab) tested four at a time, instead of
// searching the neighbour grid again for every group (the grid's cells are 4r wide, so a group's
// box query touched 27-64 of them and tested about three times the particles it kept).
#include "common/Types.h"
#include "spatial/NeighborGrid.h"
#include "surface/DistanceField_Solenthaler2007.h"

#include <array>
#include <span>
#include <vector>

namespace octo {

class BlockParticles {
public:
    /// Collects the particles (sorted positions xs of grid) in the box [lo, hi].
    void collect(const NeighborGrid& grid, std::span<const Vec3f> xs, const Vec3f& lo, const Vec3f& hi);
    /// Appends to cand the collected particles within reach of centre, relative to centre, and seals
    /// cand. Particles outside the collected box are never among them.
    void appendNear(const Vec3f& centre, float reach, DistanceField_Solenthaler2007::Candidates& cand) const;
    size_t bytes() const;

private:
    static constexpr int kSlabs = 8;
    int slab(float v, int axis) const;

    Vec3f lo_ = Vec3f::Zero();
    Vec3f invWidth_ = Vec3f::Ones();
    std::vector<float> x_, y_, z_; // bucketed by (z slab, y slab)
    std::vector<Vec3f> unsorted_;  // collected, before bucketing
    std::vector<uint8_t> bucket_;  // per unsorted particle
    std::array<uint32_t, kSlabs * kSlabs + 1> start_{};
};

} // namespace octo
