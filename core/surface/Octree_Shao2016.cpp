#include "surface/Octree_Shao2016.h"

#include <tbb/parallel_for.h>
#if defined(__x86_64__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

namespace octo {

int Octree_Shao2016::depthFor(const Vec3i& dims) {
    const int m = dims.maxCoeff();
    int d = 0;
    while ((1 << d) < m)
        ++d;
    return d;
}

void Octree_Shao2016::nodeBox(int depth, const Vec3i& coord, Vec3f& lo, Vec3f& hi) const {
    const int cells = 1 << (in_.depth - depth);
    for (int a = 0; a < 3; ++a) {
        lo[a] = in_.lattice.origin[a] + float(coord[a] * cells) * in_.lattice.cell;
        hi[a] = in_.lattice.origin[a] + float((coord[a] + 1) * cells) * in_.lattice.cell;
    }
}

bool Octree_Shao2016::anyFluidIn(const Vec3f& lo, const Vec3f& hi) const {
    const bool none = in_.grid->forEachRangeInBox(lo, hi, [&](uint32_t b, uint32_t e) {
        for (uint32_t j = b; j < e; ++j) {
            const Vec3f& p = in_.sortedPositions[j];
            if ((p.array() >= lo.array()).all() && (p.array() <= hi.array()).all())
                return false; // found one: stop
        }
        return true;
    });
    return !none;
}

void Octree_Shao2016::leaf(ThreadCtx& ctx, int depth, const Vec3i& coord, CellClass cls) const {
    ++ctx.counts.leaves;
    if (cls == CellClass::Surface)
        ++ctx.counts.surfaceLeaves;
    else if (cls == CellClass::Interior)
        ++ctx.counts.interiorLeaves;
    else
        ++ctx.counts.exteriorLeaves;
    if (!in_.storeLeaves)
        return;
    OctreeLeaf l;
    Vec3f hi;
    nodeBox(depth, coord, l.min, hi);
    l.edge = hi.x() - l.min.x();
    l.depth = uint8_t(depth);
    l.cls = cls;
    ctx.leaves.push_back(l);
}

void Octree_Shao2016::emptyLeaf(ThreadCtx& ctx, int depth, const Vec3i& coord) const {
    // Interior or exterior (fluid within l_F of the box or not) only matters to draw the leaf: the
    // neighbour-grid query per leaf was ~6 % of the octree path's CPU time.
    if (!in_.storeLeaves) {
        ++ctx.counts.leaves;
        ++ctx.counts.unclassifiedLeaves;
        return;
    }
    Vec3f lo, hi;
    nodeBox(depth, coord, lo, hi);
    const float lF = in_.fEnlargement;
    leaf(ctx, depth, coord,
         anyFluidIn(lo.array() - lF, hi.array() + lF) ? CellClass::Interior : CellClass::Exterior);
}

void Octree_Shao2016::recurse(ThreadCtx& ctx, int depth, const Vec3i& coord,
                              std::span<const uint32_t> S) const {
    ++ctx.counts.nodes;
    const float lS = in_.sEnlargement;
    if (S.empty()) {
        emptyLeaf(ctx, depth, coord);
        return;
    }
    const int D = in_.depth;
    if (depth == D) { // only reached for D == 0 (otherwise handled below the block level)
        ctx.blocks.push_back(CellBlock{blockKey(0, 0, 0), BlockMask{1ull}});
        leaf(ctx, depth, coord, CellClass::Surface);
        return;
    }
    if (depth == blockDepth_) {
        blockSubtree(ctx, coord, S);
        return;
    }
    if (ctx.scratch.size() < size_t(D + 2))
        ctx.scratch.resize(size_t(D + 2));
    std::vector<uint32_t>& buf = ctx.scratch[size_t(depth + 1)];
    for (int k = 0; k < 8; ++k) {
        const Vec3i c = coord * 2 + Vec3i(k & 1, (k >> 1) & 1, k >> 2);
        Vec3f clo, chi;
        nodeBox(depth + 1, c, clo, chi);
        const Vec3f elo = clo.array() - lS, ehi = chi.array() + lS;
        buf.clear();
        for (uint32_t i : S) {
            const Vec3f& p = in_.surfacePositions[i];
            if ((p.array() >= elo.array()).all() && (p.array() <= ehi.array()).all())
                buf.push_back(i);
        }
        recurse(ctx, depth + 1, c, buf);
    }
}

namespace {
// Bit c set when lo[c] <= x <= hi[c], c < 8 (the same comparisons four at a time on x86-64).
inline unsigned cellsHolding(float x, const float* lo, const float* hi) {
#if defined(__x86_64__) || defined(__SSE2__)
    const __m128 v = _mm_set1_ps(x);
    const int a =
        _mm_movemask_ps(_mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(lo), v), _mm_cmple_ps(v, _mm_loadu_ps(hi))));
    const int b = _mm_movemask_ps(
        _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(lo + 4), v), _mm_cmple_ps(v, _mm_loadu_ps(hi + 4))));
    return unsigned(a) | (unsigned(b) << 4);
#else
    unsigned m = 0;
    for (int c = 0; c < 8; ++c)
        m |= unsigned(x >= lo[c] && x <= hi[c]) << c;
    return m;
#endif
}
} // namespace

// The levels below a block node (at most 8^3 cells) are not split list by list: every surface
// particle of the block marks the cells whose enlarged boxes hold it, and a node below is a surface
// node exactly when one of its cells is marked. (The node's enlarged box is the union of its cells'
// enlarged boxes, also in floating point: a node's bounds are the same expressions as its first
// cell's lower and last cell's upper bound.) Same leaves, classes and counts as the split, about
// ten times fewer box tests.
void Octree_Shao2016::blockSubtree(ThreadCtx& ctx, const Vec3i& coord, std::span<const uint32_t> S) const {
    const int n = 1 << (in_.depth - blockDepth_); // cells per axis, <= 8
    const float lS = in_.sEnlargement;
    float lo[3][8], hi[3][8]; // enlarged cell bounds per axis, as nodeBox computes them at depth D
    for (int a = 0; a < 3; ++a)
        for (int c = 0; c < n; ++c) {
            const int g = coord[a] * n + c;
            lo[a][c] = (in_.lattice.origin[a] + float(g) * in_.lattice.cell) - lS;
            hi[a][c] = (in_.lattice.origin[a] + float(g + 1) * in_.lattice.cell) + lS;
        }
    for (int a = 0; a < 3; ++a)
        for (int c = n; c < 8; ++c) { // no cell: holds nothing
            lo[a][c] = std::numeric_limits<float>::infinity();
            hi[a][c] = -std::numeric_limits<float>::infinity();
        }
    BlockMask cells{};
    for (uint32_t i : S) {
        const Vec3f& p = in_.surfacePositions[i];
        unsigned m[3];
        for (int a = 0; a < 3; ++a)
            m[a] = cellsHolding(p[a], lo[a], hi[a]);
        for (unsigned mz = m[2]; mz; mz &= mz - 1)
            for (unsigned my = m[1]; my; my &= my - 1)
                cells[size_t(std::countr_zero(mz))] |= uint64_t(m[0]) << (8 * std::countr_zero(my));
    }
    subtreeFromCells(ctx, blockDepth_, coord, Vec3i::Zero(), n, cells);
    if (std::any_of(cells.begin(), cells.end(), [](uint64_t w) { return w != 0; }))
        ctx.blocks.push_back(
            CellBlock{blockKey(uint32_t(coord.x()), uint32_t(coord.y()), uint32_t(coord.z())), cells});
}

// Children of a surface node whose cells are cells[local, local + size) of its block.
void Octree_Shao2016::subtreeFromCells(ThreadCtx& ctx, int depth, const Vec3i& coord, const Vec3i& local,
                                       int size, const BlockMask& cells) const {
    const int half = size / 2;
    for (int k = 0; k < 8; ++k) {
        const Vec3i off(k & 1, (k >> 1) & 1, k >> 2);
        const Vec3i c = coord * 2 + off, l = local + off * half;
        ++ctx.counts.nodes;
        const uint64_t row = ((1ull << half) - 1ull) << l.x();
        uint64_t rows = 0;
        for (int y = l.y(); y < l.y() + half; ++y)
            rows |= row << (8 * y);
        bool surface = false;
        for (int z = l.z(); z < l.z() + half && !surface; ++z)
            surface = (cells[size_t(z)] & rows) != 0;
        if (surface && half > 1) {
            subtreeFromCells(ctx, depth + 1, c, l, half, cells);
        } else if (surface) {
            leaf(ctx, depth + 1, c, CellClass::Surface);
        } else {
            emptyLeaf(ctx, depth + 1, c);
        }
    }
}

void Octree_Shao2016::prepareTopLevels(int topDepth) {
    for (ThreadCtx& c : tls_) {
        c.blocks.clear();
        c.leaves.clear();
        c.counts = Counts{};
    }
    if (topLists_.size() < size_t(topDepth + 1))
        topLists_.resize(size_t(topDepth + 1));
    if (topNodes_.size() < size_t(topDepth + 1))
        topNodes_.resize(size_t(topDepth + 1));
    if (topLists_[0].empty())
        topLists_[0].resize(1);
    std::vector<uint32_t>& rootList = topLists_[0][0];
    rootList.resize(in_.surfacePositions.size());
    std::iota(rootList.begin(), rootList.end(), 0u);
    topNodes_[0].assign(1, TopNode{Vec3i::Zero(), 0});
}

void Octree_Shao2016::expandTopLevel(int d) {
    const auto& nodes = topNodes_[size_t(d)];
    auto& lists = topLists_[size_t(d + 1)];
    if (lists.size() < nodes.size() * 8)
        lists.resize(nodes.size() * 8);
    tls_.local().counts.nodes += nodes.size();
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, nodes.size() * 8, 1), [&](const tbb::blocked_range<size_t>& r) {
            ThreadCtx& ctx = tls_.local();
            for (size_t slot = r.begin(); slot < r.end(); ++slot) {
                const TopNode& parent = nodes[slot / 8];
                const int k = int(slot % 8);
                const Vec3i c = parent.coord * 2 + Vec3i(k & 1, (k >> 1) & 1, k >> 2);
                Vec3f lo, hi;
                nodeBox(d + 1, c, lo, hi);
                const Vec3f elo = lo.array() - in_.sEnlargement, ehi = hi.array() + in_.sEnlargement;
                std::vector<uint32_t>& out = lists[slot];
                out.clear();
                for (uint32_t i : topLists_[size_t(d)][parent.list]) {
                    const Vec3f& p = in_.surfacePositions[i];
                    if ((p.array() >= elo.array()).all() && (p.array() <= ehi.array()).all())
                        out.push_back(i);
                }
                if (out.empty()) {
                    ++ctx.counts.nodes;
                    emptyLeaf(ctx, d + 1, c);
                }
            }
        });
    auto& next = topNodes_[size_t(d + 1)];
    next.clear();
    for (size_t slot = 0; slot < nodes.size() * 8; ++slot)
        if (!lists[slot].empty()) {
            const int k = int(slot % 8);
            next.push_back(
                TopNode{nodes[slot / 8].coord * 2 + Vec3i(k & 1, (k >> 1) & 1, k >> 2), uint32_t(slot)});
        }
}

void Octree_Shao2016::collectResults(std::vector<CellBlock>& blocks, std::vector<OctreeLeaf>& leaves) {
    blocks.clear();
    leaves.clear();
    counts_ = Counts{};
    for (ThreadCtx& c : tls_) {
        blocks.insert(blocks.end(), c.blocks.begin(), c.blocks.end());
        if (in_.storeLeaves)
            leaves.insert(leaves.end(), c.leaves.begin(), c.leaves.end());
        counts_.nodes += c.counts.nodes;
        counts_.leaves += c.counts.leaves;
        counts_.surfaceLeaves += c.counts.surfaceLeaves;
        counts_.interiorLeaves += c.counts.interiorLeaves;
        counts_.exteriorLeaves += c.counts.exteriorLeaves;
        counts_.unclassifiedLeaves += c.counts.unclassifiedLeaves;
    }
}

namespace {
constexpr size_t kMaxDenseBlocks = size_t(1) << 17; // buildFromCells' grid: at most 8 MiB

// The cells c (in [0, cMax]) of one axis whose box enlarged by l holds x, bounds as nodeBox
// computes them (o + c L - l <= x <= o + (c + 1) L + l); c1 < c0 when there is none.
inline void enlargedCellRange(float x, float o, float L, float l, int cMax, int& c0, int& c1) {
    int lo = int(std::floor((x - o - l) / L)) - 2, hi = int(std::floor((x - o + l) / L)) + 2;
    while (lo <= hi && !(x <= o + float(lo + 1) * L + l))
        ++lo;
    while (hi >= lo && !(x >= o + float(hi) * L - l))
        --hi;
    c0 = std::max(lo, 0);
    c1 = std::min(hi, cMax);
}

// The parent level of a block's cells: bit (x, y, z) of the result is set when one of the cells
// (2x + i, 2y + j, 2z + k) is.
BlockMask coarser(const BlockMask& m) {
    BlockMask r{};
    for (int z = 0; z < 4; ++z) {
        const uint64_t w = m[size_t(2 * z)] | m[size_t(2 * z + 1)];
        uint64_t out = 0;
        for (int y = 0; y < 4; ++y) {
            const uint64_t row = ((w >> (16 * y)) | (w >> (16 * y + 8))) & 0xFFu;
            const uint64_t pairs = (row | (row >> 1)) & 0x55u; // bits 0, 2, 4, 6
            out |= ((pairs & 1u) | ((pairs >> 1) & 2u) | ((pairs >> 2) & 4u) | ((pairs >> 3) & 8u))
                   << (8 * y);
        }
        r[size_t(z)] = out;
    }
    return r;
}
} // namespace

bool Octree_Shao2016::buildFromCells(std::vector<CellBlock>& blocks) {
    const int D = in_.depth;
    const int n = 1 << (D - blockDepth_); // cells per block and axis
    const int shift = D - blockDepth_;
    const int rootCells = 1 << D;
    Vec3i nb;
    for (int a = 0; a < 3; ++a)
        nb[a] = std::min(1 << blockDepth_, (in_.lattice.dims[a] + n - 1) / n + 1);
    const size_t count = size_t(nb.x()) * size_t(nb.y()) * size_t(nb.z());
    if (count > kMaxDenseBlocks)
        return false;
    dense_.assign(count, BlockMask{});
    const float L = in_.lattice.cell, l = in_.sEnlargement;
    const Vec3f& o = in_.lattice.origin;
    // Every surface particle ORs its cells into the blocks: per block and z layer one word (the
    // run of x cells repeated on the y rows).
    for (const Vec3f& p : in_.surfacePositions) {
        int c0[3], c1[3];
        bool none = false;
        for (int a = 0; a < 3 && !none; ++a) {
            enlargedCellRange(p[a], o[a], L, l, rootCells - 1, c0[a], c1[a]);
            none = c1[a] < c0[a];
            if (!none && c1[a] >= nb[a] * n)
                return false; // outside the dense grid: the tree handles it
        }
        if (none)
            continue;
        for (int by = c0[1] >> shift; by <= c1[1] >> shift; ++by) {
            const int y0 = std::max(c0[1], by * n) - by * n, y1 = std::min(c1[1], by * n + n - 1) - by * n;
            uint64_t rows = 0; // bit 8 y for the y rows of the block
            for (int y = y0; y <= y1; ++y)
                rows |= 1ull << (8 * y);
            for (int bx = c0[0] >> shift; bx <= c1[0] >> shift; ++bx) {
                const int x0 = std::max(c0[0], bx * n) - bx * n,
                          x1 = std::min(c1[0], bx * n + n - 1) - bx * n;
                const uint64_t word = (((1ull << (x1 - x0 + 1)) - 1ull) << x0) * rows; // no carries: x < 8
                for (int z = c0[2]; z <= c1[2]; ++z)
                    dense_[(size_t(z >> shift) * size_t(nb.y()) + size_t(by)) * size_t(nb.x()) + size_t(bx)]
                          [size_t(z & (n - 1))] |= word;
            }
        }
    }
    blocks.clear();
    for (int bz = 0; bz < nb.z(); ++bz)
        for (int by = 0; by < nb.y(); ++by)
            for (int bx = 0; bx < nb.x(); ++bx) {
                const BlockMask& m =
                    dense_[(size_t(bz) * size_t(nb.y()) + size_t(by)) * size_t(nb.x()) + size_t(bx)];
                if (std::any_of(m.begin(), m.end(), [](uint64_t w) { return w != 0; }))
                    blocks.push_back(CellBlock{blockKey(uint32_t(bx), uint32_t(by), uint32_t(bz)), m});
            }
    countFromCells(blocks);
    return true;
}

// The tree's counts from its surface leaves: a node below the root is a surface node exactly when
// one of its cells is; the root (S = every surface particle) and each surface node above depth D
// is split into eight nodes; the other nodes are leaves.
void Octree_Shao2016::countFromCells(const std::vector<CellBlock>& blocks) {
    const int D = in_.depth;
    uint64_t inner = 1; // the root
    uint64_t cells = 0;
    for (const CellBlock& b : blocks) {
        BlockMask m = b.cells;
        for (uint64_t w : m)
            cells += uint64_t(bitCount(w));
        for (int d = D - 1; d >= std::max(blockDepth_, 1); --d) { // the block's levels above its cells
            m = coarser(m);
            for (uint64_t w : m)
                inner += uint64_t(bitCount(w));
        }
    }
    levelKeys_.clear();
    for (const CellBlock& b : blocks)
        levelKeys_.push_back(b.key);
    for (int d = blockDepth_ - 1; d >= 1; --d) { // the levels above the blocks
        for (uint64_t& k : levelKeys_) {
            const Vec3i c = blockCoords(k);
            k = blockKey(uint32_t(c.x() >> 1), uint32_t(c.y() >> 1), uint32_t(c.z() >> 1));
        }
        std::sort(levelKeys_.begin(), levelKeys_.end());
        levelKeys_.erase(std::unique(levelKeys_.begin(), levelKeys_.end()), levelKeys_.end());
        inner += levelKeys_.size();
    }
    counts_ = Counts{};
    counts_.nodes = 1 + 8 * inner;
    counts_.leaves = counts_.nodes - inner;
    counts_.surfaceLeaves = cells;
    counts_.unclassifiedLeaves = counts_.leaves - cells;
}

void Octree_Shao2016::build(const Input& input, std::vector<CellBlock>& blocks,
                            std::vector<OctreeLeaf>& leaves) {
    in_ = input;
    blockDepth_ = std::max(0, in_.depth - 3);
    // Without stored leaves (their classes need the tree), the leaves' cells directly; the root
    // alone (D = 0) and an empty S take the tree's path.
    if (!in_.storeLeaves && in_.depth > 0 && !in_.surfacePositions.empty()) {
        leaves.clear();
        if (buildFromCells(blocks))
            return;
    }
    const int topDepth = std::min(3, blockDepth_);
    prepareTopLevels(topDepth);
    // Top levels, breadth-first: one task per node (children's S lists in persistent pools).
    for (int d = 0; d < topDepth; ++d)
        expandTopLevel(d);
    // Subtrees below the top levels: serial recursion per task.
    const auto& starts = topNodes_[size_t(topDepth)];
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, starts.size(), 1), [&](const tbb::blocked_range<size_t>& r) {
            ThreadCtx& ctx = tls_.local();
            for (size_t i = r.begin(); i < r.end(); ++i)
                recurse(ctx, topDepth, starts[i].coord, topLists_[size_t(topDepth)][starts[i].list]);
        });
    collectResults(blocks, leaves);
}

size_t Octree_Shao2016::bytes() const {
    size_t b = 0;
    for (const ThreadCtx& c : tls_) {
        for (const auto& v : c.scratch)
            b += v.capacity() * sizeof(uint32_t);
        b += c.blocks.capacity() * sizeof(CellBlock) + c.leaves.capacity() * sizeof(OctreeLeaf);
    }
    for (const auto& level : topLists_)
        for (const auto& v : level)
            b += v.capacity() * sizeof(uint32_t);
    for (const auto& level : topNodes_)
        b += level.capacity() * sizeof(TopNode);
    return b + dense_.capacity() * sizeof(BlockMask) + levelKeys_.capacity() * sizeof(uint64_t);
}

} // namespace octo
