#pragma once
// The fluid's forces on tracked boundary samples, summed in a fixed order. Each block of fluid
// particles is handled by one thread at a time, in particle order, so its contributions are
// buffered per block and added to the boundary model block by block afterwards: the same scene,
// settings and thread count give bit-identical body forces (atomic float adds did not: their
// order, and so the rounding, followed the thread schedule).
#include "sph/BoundaryModel.h"

#include <utility>
#include <vector>

namespace octo {

class BoundaryForceBuffer {
public:
    /// Empties the buffers, one per block of fluid particles (keeps their capacity).
    void reset(size_t blocks) {
        if (buffers_.size() < blocks)
            buffers_.resize(blocks);
        for (auto& b : buffers_)
            b.clear();
    }
    /// F on sorted boundary sample k from a particle of `block`; one thread per block at a time.
    void add(size_t block, uint32_t k, const Vec3f& force) { buffers_[block].emplace_back(k, force); }
    /// Adds every buffered force to the boundary model in block order, then empties the buffers.
    void flush(BoundaryModel& boundary) {
        for (auto& b : buffers_) {
            for (const auto& [k, f] : b)
                boundary.addForceSorted(k, f);
            b.clear();
        }
    }

private:
    std::vector<std::vector<std::pair<uint32_t, Vec3f>>> buffers_;
};

} // namespace octo
