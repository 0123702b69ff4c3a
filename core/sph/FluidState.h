#pragma once
// Fluid particles as structure-of-arrays (one entry per particle, same order in every array).
// The solver keeps the arrays sorted by neighbour-grid cell (Z-order) and permutes all of them
// together, so `ids` gives each particle's stable identity across re-sorts.
#include "common/Types.h"

#include <cstdint>
#include <vector>

namespace octo {

struct FluidState {
    std::vector<Vec3f> positions;  // m
    std::vector<Vec3f> velocities; // m/s
    std::vector<float> densities;  // kg/m^3 (last predicted density of the step)
    std::vector<float> pressures;  // Pa (PCISPH pressure of the step, >= 0)
    std::vector<uint32_t> ids;     // creation index, stable under sorting

    size_t size() const { return positions.size(); }
    void resize(size_t n) {
        positions.resize(n, Vec3f::Zero());
        velocities.resize(n, Vec3f::Zero());
        densities.resize(n, 0.0f);
        pressures.resize(n, 0.0f);
        ids.resize(n, 0u);
    }
    void clear() { resize(0); }
};

} // namespace octo
