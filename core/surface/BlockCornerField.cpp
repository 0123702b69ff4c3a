#include "surface/BlockCornerField.h"

#include "surface/MarchingCubes_LorensenCline1987.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <bit>

namespace octo {

namespace {
constexpr uint64_t kX0 = 0x0101010101010101ull; // cells with x == 0
constexpr uint64_t kX7 = 0x8080808080808080ull; // x == 7
constexpr uint64_t kY7 = 0xFF00000000000000ull; // y == 7
constexpr float kMinT = 1e-3f;                  // crossings stay this far (in cells) from corners

inline void atomicOr(uint64_t& word, uint64_t bits) {
    if (bits)
        std::atomic_ref<uint64_t>(word).fetch_or(bits, std::memory_order_relaxed);
}

// The corners of a block's cells, split by the block that owns them (offset dx | dy<<1 | dz<<2).
void cornerMasks(const BlockMask& cells, std::array<BlockMask, 8>& m) {
    for (auto& a : m)
        a.fill(0);
    m[0] = cells;
    for (int w = 0; w < 8; ++w) {
        m[1][w] = (m[0][w] & kX7) >> 7;
        m[0][w] |= (m[0][w] << 1) & ~kX0;
    }
    for (int off = 0; off < 2; ++off)
        for (int w = 0; w < 8; ++w) {
            m[off | 2][w] = m[off][w] >> 56;
            m[off][w] |= m[off][w] << 8;
        }
    for (int off = 0; off < 4; ++off) {
        m[off | 4][0] = m[off][7];
        for (int w = 7; w >= 1; --w)
            m[off][w] |= m[off][w - 1];
    }
}

// Local corner (lx, ly, lz) in [0, 8] -> owning block offset and local index.
inline void owner(int lx, int ly, int lz, int& off, int& idx) {
    off = (lx >> 3) | ((ly >> 3) << 1) | ((lz >> 3) << 2);
    idx = (lx & 7) | ((ly & 7) << 3) | ((lz & 7) << 6);
}

// Case index and corner values of cell (x, y, z) of a block with neighbours `nbr`.
inline int cubeIndex(const std::vector<float>& phi, const std::array<int32_t, 8>& nbr, int x, int y, int z,
                     float* v) {
    int ci = 0;
    for (int c = 0; c < 8; ++c) {
        int off, idx;
        owner(x + (c & 1), y + ((c >> 1) & 1), z + (c >> 2), off, idx);
        v[c] = phi[size_t(nbr[size_t(off)]) * 512 + size_t(idx)];
        ci |= int(v[c] < 0.0f) << c;
    }
    return ci;
}

// Calls f(x, y, z) for each active cell of a block.
template <class F> inline void forEachCell(const BlockMask& cells, F&& f) {
    for (int w = 0; w < 8; ++w)
        for (uint64_t m = cells[size_t(w)]; m; m &= m - 1) {
            const int bit = std::countr_zero(m);
            f(bit & 7, bit >> 3, w);
        }
}

// Crossing point on edge e of cell (x, y, z) at block origin g0, from the cell's corner values.
// t is kept off the corners so that a corner with phi = 0 exactly (outside) does not put
// several vertices at one point.
inline Vec3f crossing(const Lattice& lattice, const MarchingCubesTable& table, const Vec3i& g0, int x, int y,
                      int z, const float* v, int e) {
    const int c = table.edgeCorner(e), axis = table.edgeAxis(e);
    const float p0 = v[c], p1 = v[c | (1 << axis)];
    const float t = std::clamp(p0 / (p0 - p1), kMinT, 1.0f - kMinT);
    const int l[3] = {x + (c & 1), y + ((c >> 1) & 1), z + (c >> 2)};
    Vec3f p;
    for (int a = 0; a < 3; ++a)
        p[a] = lattice.origin[a] + (float(g0[a] + l[a]) + (a == axis ? t : 0.0f)) * lattice.cell;
    return p;
}

// Area-weighted vertex normals (the cross product's length is twice the area), normalised.
void areaWeightedNormals(TriangleMesh& mesh) {
    mesh.normals.assign(mesh.vertices.size(), Vec3f::Zero());
    for (const auto& tri : mesh.triangles) {
        const Vec3f n = (mesh.vertices[tri[1]] - mesh.vertices[tri[0]])
                            .cross(mesh.vertices[tri[2]] - mesh.vertices[tri[0]]);
        for (uint32_t i : tri)
            mesh.normals[i] += n;
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, mesh.normals.size(), 8192),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i < r.end(); ++i) {
                              const float len = mesh.normals[i].norm();
                              mesh.normals[i] = len > 0.0f ? Vec3f(mesh.normals[i] / len) : Vec3f::UnitY();
                          }
                      });
}
} // namespace

int32_t BlockCornerField::findBlock(uint64_t key) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
    return (it != keys_.end() && *it == key) ? int32_t(it - keys_.begin()) : -1;
}

void BlockCornerField::setCells(const Lattice& lattice, std::vector<CellBlock>& blocks) {
    lattice_ = lattice;
    std::sort(blocks.begin(), blocks.end(),
              [](const CellBlock& a, const CellBlock& b) { return a.key < b.key; });
    keys_.resize(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b)
        keys_[b] = blocks[b].key;

    // Neighbours on the +x/+y/+z side own the corners of cells on this block's upper faces.
    scratchKeys_.clear();
    for (const CellBlock& blk : blocks) {
        const Vec3i c = blockCoords(blk.key);
        for (int off = 1; off < 8; ++off) {
            const int dx = off & 1, dy = (off >> 1) & 1, dz = (off >> 2) & 1;
            bool any = false;
            for (int w = dz ? 7 : 0; w < 8 && !any; ++w) {
                uint64_t m = ~0ull;
                if (dx)
                    m &= kX7;
                if (dy)
                    m &= kY7;
                any = (blk.cells[w] & m) != 0;
            }
            if (!any)
                continue;
            const uint64_t k = blockKey(uint32_t(c.x() + dx), uint32_t(c.y() + dy), uint32_t(c.z() + dz));
            if (findBlock(k) < 0)
                scratchKeys_.push_back(k);
        }
    }
    std::sort(scratchKeys_.begin(), scratchKeys_.end());
    scratchKeys_.erase(std::unique(scratchKeys_.begin(), scratchKeys_.end()), scratchKeys_.end());
    if (!scratchKeys_.empty()) {
        for (uint64_t k : scratchKeys_)
            blocks.push_back(CellBlock{k, {}});
        std::sort(blocks.begin(), blocks.end(),
                  [](const CellBlock& a, const CellBlock& b) { return a.key < b.key; });
        keys_.resize(blocks.size());
        for (size_t b = 0; b < blocks.size(); ++b)
            keys_[b] = blocks[b].key;
    }
    const size_t nb = blocks.size();
    cells_.resize(nb);
    nbr_.resize(nb);
    cornerMask_.assign(nb, BlockMask{});
    for (size_t b = 0; b < nb; ++b) {
        cells_[b] = blocks[b].cells;
        const Vec3i c = blockCoords(keys_[b]);
        for (int off = 0; off < 8; ++off)
            nbr_[b][off] = findBlock(blockKey(uint32_t(c.x() + (off & 1)), uint32_t(c.y() + ((off >> 1) & 1)),
                                              uint32_t(c.z() + (off >> 2))));
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, nb, 16), [&](const tbb::blocked_range<size_t>& r) {
        std::array<BlockMask, 8> m;
        for (size_t b = r.begin(); b < r.end(); ++b) {
            cornerMasks(cells_[b], m);
            for (int off = 0; off < 8; ++off) {
                const int32_t t = nbr_[b][off];
                if (t < 0)
                    continue; // no spill into it (guaranteed above)
                for (int w = 0; w < 8; ++w)
                    atomicOr(cornerMask_[size_t(t)][w], m[off][w]);
            }
        }
    });
    corners_ = 0;
    for (const BlockMask& m : cornerMask_)
        for (uint64_t w : m)
            corners_ += uint64_t(bitCount(w));
    phi_.resize(nb * 512);
}

void BlockCornerField::evaluate(
    const std::function<void(const Vec3i& blockOrigin, const BlockMask& corners, float* phi)>& evalBlock) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, keys_.size(), 1),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t b = r.begin(); b < r.end(); ++b) {
                              const Vec3i origin = blockCoords(keys_[b]) * 8;
                              evalBlock(origin, cornerMask_[b], phi_.data() + b * 512);
                          }
                      });
}

void BlockCornerField::marchingCubes(TriangleMesh& mesh, bool computeNormals) {
    const MarchingCubesTable& table = marchingCubesTable();
    const size_t nb = keys_.size();
    edgeMask_.assign(nb, {});
    edgePrefix_.resize(nb);
    triCount_.assign(nb, 0);
    extraCount_.assign(nb, 0);
    vertexBase_.resize(nb + 1);
    triBase_.resize(nb + 1);

    inside_.resize(nb);
    crossing_.resize(nb);
    markInsideCorners();
    markCrossingEdges(table);
    numberVerticesAndTriangles();
    mesh.vertices.resize(vertexBase_[nb]);
    mesh.triangles.resize(triBase_[nb]);
    // Pass 3: vertex positions by linear interpolation, then the triangles.
    tbb::parallel_for(tbb::blocked_range<size_t>(0, nb, 4), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t b = r.begin(); b < r.end(); ++b) {
            const Vec3i g0 = blockCoords(keys_[b]) * 8;
            const uint32_t v = writeEdgeVertices(b, g0, mesh);
            writeCellTriangles(table, b, g0, v, mesh);
        }
    });
    mesh.normals.clear();
    if (computeNormals)
        areaWeightedNormals(mesh);
}

// The sign of every needed corner (phi < 0, as cubeIndex tests it), 512 bits per block.
void BlockCornerField::markInsideCorners() {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, keys_.size(), 16),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t b = r.begin(); b < r.end(); ++b) {
                              const float* phi = phi_.data() + b * 512;
                              for (int w = 0; w < 8; ++w) {
                                  uint64_t in = 0;
                                  for (uint64_t m = cornerMask_[b][size_t(w)]; m; m &= m - 1) {
                                      const int bit = std::countr_zero(m);
                                      in |= uint64_t(phi[64 * w + bit] < 0.0f) << bit;
                                  }
                                  inside_[b][size_t(w)] = in;
                              }
                          }
                      });
}

// The active cells of block b with corners on both sides (cube index neither 0 nor 255), from the
// corner signs of b and of its +x/+y/+z neighbours: each of a cell's eight corner signs is the
// block's sign mask shifted by the corner's offset, so only these cells need their cube index.
BlockMask BlockCornerField::crossingCells(size_t b) const {
    static const BlockMask kNone{};
    auto signs = [&](int off) -> const BlockMask& {
        const int32_t t = nbr_[b][size_t(off)];
        return t < 0 ? kNone : inside_[size_t(t)];
    };
    auto shiftX = [](uint64_t m, uint64_t mx) { return ((m >> 1) & ~kX7) | ((mx & kX0) << 7); };
    auto shiftY = [](uint64_t m, uint64_t my) { return (m >> 8) | (my << 56); };
    BlockMask allIn, anyIn, out;
    allIn.fill(~0ull);
    anyIn.fill(0);
    for (int c = 0; c < 8; ++c) {
        const int dx = c & 1, dy = (c >> 1) & 1, dz = c >> 2;
        for (int w = 0; w < 8; ++w) {
            const int zOff = (w + dz) >> 3 ? 4 : 0, wz = (w + dz) & 7; // the corner's block layer and word
            auto row = [&](int yOff) { // the corners at x + dx of the cells, y offset block yOff
                const uint64_t m = signs(zOff | yOff)[size_t(wz)];
                return dx ? shiftX(m, signs(zOff | yOff | 1)[size_t(wz)]) : m;
            };
            const uint64_t s = dy ? shiftY(row(0), row(2)) : row(0);
            allIn[size_t(w)] &= s;
            anyIn[size_t(w)] |= s;
        }
    }
    for (int w = 0; w < 8; ++w)
        out[size_t(w)] = cells_[b][size_t(w)] & anyIn[size_t(w)] & ~allIn[size_t(w)];
    return out;
}

// Pass 1: crossing edges of the crossed cells, marked in the block owning the edge's lower corner;
// the triangle and loop-centre counts per block.
void BlockCornerField::markCrossingEdges(const MarchingCubesTable& table) {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, keys_.size(), 4), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t b = r.begin(); b < r.end(); ++b) {
                uint32_t tris = 0, extras = 0;
                crossing_[b] = crossingCells(b);
                forEachCell(crossing_[b], [&](int x, int y, int z) {
                    float v[8];
                    const int ci = cubeIndex(phi_, nbr_[b], x, y, z, v);
                    const MarchingCubesTable::Entry& entry = table.entry(ci, v);
                    tris += entry.triangleCount;
                    extras += entry.extraCount;
                    for (uint32_t em = table.edgeMask[size_t(ci)]; em; em &= em - 1) {
                        const int e = std::countr_zero(em);
                        const int c = table.edgeCorner(e);
                        int off, idx;
                        owner(x + (c & 1), y + ((c >> 1) & 1), z + (c >> 2), off, idx);
                        const int bit = idx * 3 + table.edgeAxis(e);
                        atomicOr(edgeMask_[size_t(nbr_[b][off])][size_t(bit >> 6)], 1ull << (bit & 63));
                    }
                });
                triCount_[b] = tris;
                extraCount_[b] = extras;
            }
        });
}

// Pass 2: vertex and triangle numbering (block order, then edge order).
void BlockCornerField::numberVerticesAndTriangles() {
    vertexBase_[0] = triBase_[0] = 0;
    for (size_t b = 0; b < keys_.size(); ++b) {
        uint32_t s = 0;
        for (int w = 0; w < 24; ++w) {
            edgePrefix_[b][w] = s;
            s += uint32_t(bitCount(edgeMask_[b][w]));
        }
        vertexBase_[b + 1] = vertexBase_[b] + s + extraCount_[b];
        triBase_[b + 1] = triBase_[b] + triCount_[b];
    }
}

// Block b's edge vertices by linear interpolation; returns the index after the last one written.
uint32_t BlockCornerField::writeEdgeVertices(size_t b, const Vec3i& g0, TriangleMesh& mesh) const {
    uint32_t v = vertexBase_[b];
    for (int w = 0; w < 24; ++w)
        for (uint64_t m = edgeMask_[b][w]; m; m &= m - 1) {
            const int bit = w * 64 + std::countr_zero(m);
            const int idx = bit / 3, axis = bit % 3;
            int l[3] = {idx & 7, (idx >> 3) & 7, idx >> 6};
            const float p0 = phi_[b * 512 + size_t(idx)];
            l[axis] += 1;
            int off, idx1;
            owner(l[0], l[1], l[2], off, idx1);
            const float p1 = phi_[size_t(nbr_[b][off]) * 512 + size_t(idx1)];
            l[axis] -= 1;
            const float t = std::clamp(p0 / (p0 - p1), kMinT, 1.0f - kMinT);
            Vec3f p;
            for (int a = 0; a < 3; ++a)
                p[a] = lattice_.origin[a] + (float(g0[a] + l[a]) + (a == axis ? t : 0.0f)) * lattice_.cell;
            mesh.vertices[v++] = p;
        }
    return v;
}

// Block b's loop-centre vertices (from index v on) and triangles, crossed cell by crossed cell.
void BlockCornerField::writeCellTriangles(const MarchingCubesTable& table, size_t b, const Vec3i& g0,
                                          uint32_t v, TriangleMesh& mesh) const {
    auto vertexId = [&](size_t ob, int bit) {
        const auto w = size_t(bit >> 6);
        const uint64_t below = edgeMask_[ob][w] & ((1ull << (bit & 63)) - 1ull);
        return vertexBase_[ob] + edgePrefix_[ob][w] + uint32_t(bitCount(below));
    };
    uint32_t t = triBase_[b];
    forEachCell(crossing_[b], [&](int x, int y, int z) {
        float cv[8];
        const int ci = cubeIndex(phi_, nbr_[b], x, y, z, cv);
        const MarchingCubesTable::Entry& entry = table.entry(ci, cv);
        const uint32_t extra0 = v;
        for (int k = 0; k < entry.extraCount; ++k) { // loop centres: mean of the loop's crossings
            Vec3f sum = Vec3f::Zero();
            int cnt = 0;
            for (uint32_t em = entry.extraLoops[size_t(k)]; em; em &= em - 1, ++cnt)
                sum += crossing(lattice_, table, g0, x, y, z, cv, std::countr_zero(em));
            mesh.vertices[v++] = sum / float(cnt);
        }
        const auto& tri = entry.triangles;
        for (int k = 0; tri[size_t(k)] >= 0; k += 3) {
            std::array<uint32_t, 3> ids;
            for (int q = 0; q < 3; ++q) {
                const int e = tri[size_t(k + q)];
                if (e >= 12) {
                    ids[size_t(q)] = extra0 + uint32_t(e - 12);
                    continue;
                }
                const int c = table.edgeCorner(e);
                int off, idx;
                owner(x + (c & 1), y + ((c >> 1) & 1), z + (c >> 2), off, idx);
                ids[size_t(q)] = vertexId(size_t(nbr_[b][off]), idx * 3 + table.edgeAxis(e));
            }
            mesh.triangles[t++] = ids;
        }
    });
}

size_t BlockCornerField::bytes() const {
    return keys_.capacity() * sizeof(uint64_t) + cells_.capacity() * sizeof(BlockMask) +
           cornerMask_.capacity() * sizeof(BlockMask) + nbr_.capacity() * sizeof(nbr_[0]) +
           phi_.capacity() * sizeof(float) + (inside_.capacity() + crossing_.capacity()) * sizeof(BlockMask) +
           edgeMask_.capacity() * sizeof(edgeMask_[0]) + edgePrefix_.capacity() * sizeof(edgePrefix_[0]) +
           (vertexBase_.capacity() + triBase_.capacity() + triCount_.capacity() + extraCount_.capacity()) *
               sizeof(uint32_t) +
           scratchKeys_.capacity() * sizeof(uint64_t) + scratchBlocks_.capacity() * sizeof(CellBlock);
}

} // namespace octo
