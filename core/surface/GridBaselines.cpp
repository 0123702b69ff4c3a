#include "surface/GridBaselines.h"

#include <tbb/parallel_for.h>

#include <atomic>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace octo {

Vec3i blockGridDims(const Lattice& lattice, uint64_t maxBlocks, const char* method) {
    const Vec3i nb = (lattice.dims.array() + 7) / 8;
    const uint64_t count = uint64_t(nb.x()) * uint64_t(nb.y()) * uint64_t(nb.z());
    if (count > maxBlocks) {
        std::ostringstream s;
        s << "the " << method << " method would need " << count * 512 << " cells (" << lattice.dims.x()
          << " x " << lattice.dims.y() << " x " << lattice.dims.z() << " at L = " << lattice.cell
          << " m); use the octree method or a larger leaf size";
        throw std::length_error(s.str());
    }
    return nb;
}

void UniformGrid_Solenthaler2007::cells(const Lattice& lattice, std::vector<CellBlock>& blocks) {
    const Vec3i nb = blockGridDims(lattice, uint64_t(1) << 17, "uniform");
    blocks.resize(size_t(nb.x()) * size_t(nb.y()) * size_t(nb.z()));
    tbb::parallel_for(tbb::blocked_range<int>(0, nb.z()), [&](const tbb::blocked_range<int>& r) {
        for (int bz = r.begin(); bz < r.end(); ++bz)
            for (int by = 0; by < nb.y(); ++by)
                for (int bx = 0; bx < nb.x(); ++bx) {
                    CellBlock& b =
                        blocks[(size_t(bz) * size_t(nb.y()) + size_t(by)) * size_t(nb.x()) + size_t(bx)];
                    b.key = blockKey(uint32_t(bx), uint32_t(by), uint32_t(bz));
                    b.cells.fill(0);
                    const int nx = std::min(8, lattice.dims.x() - 8 * bx),
                              ny = std::min(8, lattice.dims.y() - 8 * by),
                              nz = std::min(8, lattice.dims.z() - 8 * bz);
                    const uint64_t row = nx == 8 ? 0xFFull : ((1ull << nx) - 1ull);
                    for (int z = 0; z < nz; ++z)
                        for (int y = 0; y < ny; ++y)
                            b.cells[size_t(z)] |= row << (8 * y);
                }
    });
}

namespace {
// Dense masks -> list of non-empty blocks.
void collect(const Vec3i& nb, const std::vector<BlockMask>& masks, std::vector<CellBlock>& blocks) {
    blocks.clear();
    for (int bz = 0; bz < nb.z(); ++bz)
        for (int by = 0; by < nb.y(); ++by)
            for (int bx = 0; bx < nb.x(); ++bx) {
                const BlockMask& m =
                    masks[(size_t(bz) * size_t(nb.y()) + size_t(by)) * size_t(nb.x()) + size_t(bx)];
                bool any = false;
                for (uint64_t w : m)
                    any |= w != 0;
                if (any)
                    blocks.push_back(CellBlock{blockKey(uint32_t(bx), uint32_t(by), uint32_t(bz)), m});
            }
}
} // namespace

void NarrowBand_Akinci2012::cells(const Lattice& lattice, std::span<const Vec3f> surfacePositions, float l,
                                  DenseBlockScratch& scratch, std::vector<CellBlock>& blocks) {
    const Vec3i nb = blockGridDims(lattice, uint64_t(1) << 20, "narrow-band");
    const size_t count = size_t(nb.x()) * size_t(nb.y()) * size_t(nb.z());
    scratch.masks.assign(count, BlockMask{});
    const float L = lattice.cell;
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, surfacePositions.size(), 256),
        [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i) {
                const Vec3f& p = surfacePositions[i];
                int c0[3], c1[3];
                for (int a = 0; a < 3; ++a) {
                    // Cell c qualifies when o + cL - l <= p <= o + (c + 1)L + l (the octree's own test).
                    const float o = lattice.origin[a];
                    int lo = int(std::floor((p[a] - o - l) / L)) - 2,
                        hi = int(std::floor((p[a] - o + l) / L)) + 2;
                    while (lo <= hi && !(p[a] <= o + float(lo + 1) * L + l))
                        ++lo;
                    while (hi >= lo && !(p[a] >= o + float(hi) * L - l))
                        --hi;
                    c0[a] = std::max(lo, 0);
                    c1[a] = std::min(hi, nb[a] * 8 - 1);
                }
                for (int z = c0[2]; z <= c1[2]; ++z)
                    for (int y = c0[1]; y <= c1[1]; ++y)
                        for (int bx = c0[0] >> 3; bx <= c1[0] >> 3; ++bx) {
                            const int x0 = std::max(c0[0], bx * 8) - bx * 8,
                                      x1 = std::min(c1[0], bx * 8 + 7) - bx * 8;
                            const uint64_t run = ((1ull << (x1 - x0 + 1)) - 1ull) << (x0 + 8 * (y & 7));
                            BlockMask& m = scratch.masks[(size_t(z >> 3) * size_t(nb.y()) + size_t(y >> 3)) *
                                                             size_t(nb.x()) +
                                                         size_t(bx)];
                            std::atomic_ref<uint64_t>(m[size_t(z & 7)])
                                .fetch_or(run, std::memory_order_relaxed);
                        }
            }
        });
    collect(nb, scratch.masks, blocks);
}

void SparseGrid_Splashsurf::cells(const Lattice& lattice, std::span<const Vec3f> sortedPositions, float R,
                                  DenseBlockScratch& scratch, std::vector<CellBlock>& blocks) {
    const Vec3i nb = blockGridDims(lattice, uint64_t(1) << 24, "sparse-grid");
    const size_t count = size_t(nb.x()) * size_t(nb.y()) * size_t(nb.z());
    scratch.flags.assign(count, 0);
    const float inv = 1.0f / (8.0f * lattice.cell);
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, sortedPositions.size(), 4096),
        [&](const tbb::blocked_range<size_t>& r) {
            int prev[6] = {-1, -1, -1, -1, -1, -1};
            for (size_t i = r.begin(); i < r.end(); ++i) {
                const Vec3f& p = sortedPositions[i];
                int b[6];
                for (int a = 0; a < 3; ++a) {
                    b[a] = std::clamp(int(std::floor((p[a] - R - lattice.origin[a]) * inv)), 0, nb[a] - 1);
                    b[a + 3] =
                        std::clamp(int(std::floor((p[a] + R - lattice.origin[a]) * inv)), 0, nb[a] - 1);
                }
                if (std::equal(b, b + 6, prev))
                    continue; // neighbours in sorted order mostly repeat
                std::copy(b, b + 6, prev);
                for (int z = b[2]; z <= b[5]; ++z)
                    for (int y = b[1]; y <= b[4]; ++y)
                        for (int x = b[0]; x <= b[3]; ++x)
                            std::atomic_ref<uint8_t>(
                                scratch.flags[(size_t(z) * size_t(nb.y()) + size_t(y)) * size_t(nb.x()) +
                                              size_t(x)])
                                .store(1, std::memory_order_relaxed);
            }
        });
    blocks.clear();
    BlockMask full;
    full.fill(~0ull);
    for (int z = 0; z < nb.z(); ++z)
        for (int y = 0; y < nb.y(); ++y)
            for (int x = 0; x < nb.x(); ++x)
                if (scratch.flags[(size_t(z) * size_t(nb.y()) + size_t(y)) * size_t(nb.x()) + size_t(x)])
                    blocks.push_back(CellBlock{blockKey(uint32_t(x), uint32_t(y), uint32_t(z)), full});
}

} // namespace octo
