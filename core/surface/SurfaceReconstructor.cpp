#include "surface/SurfaceReconstructor.h"

#include "surface/DistanceField_Solenthaler2007.h"
#include "surface/SurfaceDetection_Marrone2010.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace octo {

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

uint64_t countCells(const std::vector<CellBlock>& blocks) {
    uint64_t n = 0;
    for (const CellBlock& b : blocks)
        for (uint64_t w : b.cells)
            n += uint64_t(bitCount(w));
    return n;
}

// Far-flung particles (e.g. at +-1e30) would make the detection grid and the lattice astronomically
// large and overflow their int cell counts: refuse a span of more than 2^20 leaves on an axis.
void checkSpan(const Vec3f& extent, float L) {
    for (int a = 0; a < 3; ++a) {
        const double cells = std::ceil(double(extent[a]) / double(L));
        if (cells > double(1 << 20)) {
            std::ostringstream s;
            s << "surface reconstruction: the particles span " << extent[a] << " m, " << cells
              << " cells of L = " << L << " m on one axis (limit 1048576); check for far-flung particles";
            throw std::length_error(s.str());
        }
    }
}

constexpr size_t kRadixSortedVertices = size_t(1) << 16;

// Sorts (key, index) pairs with keys < maxKey and indices ascending by key, stably (so in the
// order of sorting the pairs): a least-significant-digit radix sort, 11 bits per pass.
void sortByKey(std::vector<std::pair<uint64_t, uint32_t>>& a, std::vector<std::pair<uint64_t, uint32_t>>& tmp,
               uint64_t maxKey) {
    constexpr int kBits = 11;
    constexpr size_t kBuckets = size_t(1) << kBits;
    const int passes = (std::bit_width(maxKey) + kBits - 1) / kBits;
    tmp.resize(a.size());
    std::array<uint32_t, kBuckets> start;
    for (int pass = 0; pass < passes; ++pass) {
        const int shift = pass * kBits;
        start.fill(0);
        for (const auto& e : a)
            ++start[(e.first >> shift) & (kBuckets - 1)];
        uint32_t sum = 0;
        for (uint32_t& c : start)
            sum += std::exchange(c, sum);
        for (const auto& e : a)
            tmp[start[(e.first >> shift) & (kBuckets - 1)]++] = e;
        a.swap(tmp);
    }
}

} // namespace

float SurfaceReconstructor::distanceAt(const Vec3f& x) const {
    const DistanceField_Solenthaler2007 field(settings_.particleRadius,
                                              settings_.kernelRadiusFactor * settings_.particleRadius,
                                              settings_.tLow, settings_.tHigh);
    if (xs_.empty())
        return field.kernelRadius();
    return field(x, grid_, xs_);
}

float SurfaceReconstructor::phiAt(const Vec3f& x) const {
    if (settings_.field == SurfaceField::Distance)
        return distanceAt(x);
    float f = 0.0f;
    if (!xs_.empty() && kernels_.size() == xs_.size())
        grid_.forEachNeighbor(x, kernels_.settings().kernelRadius + kernels_.maxShift(), xs_,
                              [&](uint32_t j, const Vec3f&, float) { f += kernels_.contribution(j, x); });
    return settings_.isoLevel - f;
}

void SurfaceReconstructor::buildCells(SurfaceMethod method, std::vector<CellBlock>& blocks, bool forCount) {
    const float R = settings_.kernelRadiusFactor * settings_.particleRadius;
    switch (method) {
    case SurfaceMethod::Octree: {
        Octree_Shao2016::Input in;
        in.lattice = lattice_;
        in.depth = depth_;
        in.surfacePositions = surfaceXs_;
        in.sEnlargement = settings_.sEnlargementFactor * R;
        in.fEnlargement = R;
        in.grid = &grid_;
        in.sortedPositions = xs_;
        in.storeLeaves = settings_.storeLeaves && !forCount;
        std::vector<OctreeLeaf> none;
        octree_.build(in, blocks, forCount ? none : result_.leaves);
        break;
    }
    case SurfaceMethod::Uniform:
        UniformGrid_Solenthaler2007::cells(lattice_, blocks);
        break;
    case SurfaceMethod::Narrow:
        NarrowBand_Akinci2012::cells(lattice_, surfaceXs_, R, dense_, blocks);
        break;
    case SurfaceMethod::Sparse:
        SparseGrid_Splashsurf::cells(lattice_, xs_, R, dense_, blocks);
        break;
    }
}

void SurfaceReconstructor::detect(std::span<const float> densities, Clock::time_point t0) {
    const SurfaceSettings& settings = settings_;
    SurfaceStats& st = result_.stats;
    const size_t n = xs_.size();
    const float r = settings.particleRadius;
    const float h = settings.supportFactor * r;
    if (!settings.detectSurface) {
        result_.lambda.clear();
        result_.surfaceFlag.clear();
        surfaceXs_.clear();
        st.tDetectMs = msSince(t0); // grid build only
    } else {
        rho_.resize(n);
        lambda_.resize(n);
        const float mass = settings.restDensity * 8.0f * r * r * r;
        const CubicSplineKernel kernel(h);
        if (densities.empty()) {
            SurfaceDetection_Marrone2010::computeDensitiesAndLambda(grid_, xs_, kernel, mass, rho_, lambda_,
                                                                    detection_);
        } else {
            grid_.gather(densities, rho_);
            SurfaceDetection_Marrone2010::computeLambda(grid_, xs_, rho_, kernel, mass, lambda_, detection_);
        }
        const auto order = grid_.order();
        const float lambdaMin = settings.lambdaMin;
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 16384), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t k = r.begin(); k < r.end(); ++k) {
                result_.lambda[order[k]] = lambda_[k];
                result_.surfaceFlag[order[k]] = lambda_[k] <= lambdaMin ? 1 : 0;
            }
        });
        surfaceXs_.clear();
        for (size_t k = 0; k < n; ++k)
            if (lambda_[k] <= lambdaMin)
                surfaceXs_.push_back(xs_[k]);
        st.surfaceParticles = surfaceXs_.size();
        st.tDetectMs = msSince(t0);
    }
}

void SurfaceReconstructor::evaluateCorners() {
    const SurfaceSettings& settings = settings_;
    const float r = settings.particleRadius;
    const float L = settings.effectiveLeafSize();
    const float R = settings.kernelRadiusFactor * r;
    const DistanceField_Solenthaler2007 field(r, R, settings.tLow, settings.tHigh);
    field_.evaluate([&](const Vec3i& g0, const BlockMask& corners, float* phi) {
        // The block's particles are copied once (every particle within R of its corners); corners in
        // groups of 2x2x2 share one candidate list (particles within R + half the group's diagonal
        // of its centre): about 2x fewer distance tests than a list per corner.
        CornerScratch& scratch = cornerScratch_.local();
        const Vec3f lo = lattice_.corner(g0.x(), g0.y(), g0.z());
        scratch.block.collect(grid_, xs_, lo.array() - R, lo.array() + (7.0f * L + R));
        const float reach = R + 0.5f * std::sqrt(3.0f) * L;
        DistanceField_Solenthaler2007::Candidates& cand = scratch.candidates;
        for (int gz = 0; gz < 8; gz += 2)
            for (int gy = 0; gy < 8; gy += 2) {
                const uint64_t rows = (corners[size_t(gz)] | corners[size_t(gz + 1)]);
                for (int gx = 0; gx < 8; gx += 2) {
                    const uint64_t groupBits = (0x303ull << (gx + 8 * gy));
                    if (!(rows & groupBits))
                        continue;
                    const Vec3f centre =
                        lattice_.corner(g0.x() + gx, g0.y() + gy, g0.z() + gz).array() + 0.5f * L;
                    scratch.block.appendNear(centre, reach, cand);
                    for (int dz = 0; dz < 2; ++dz)
                        for (int dy = 0; dy < 2; ++dy)
                            for (int dx = 0; dx < 2; ++dx) {
                                const int lx = gx + dx, ly = gy + dy, lz = gz + dz;
                                const int bit = lx + 8 * ly;
                                if (!((corners[size_t(lz)] >> bit) & 1u))
                                    continue;
                                const Vec3f x = lattice_.corner(g0.x() + lx, g0.y() + ly, g0.z() + lz);
                                phi[bit + 64 * lz] = field.phi(cand, x - centre);
                            }
                }
            }
    });
}

// The kernels centred within R of the block's corners, and within reach of the centres of the
// groups that have corners (per axis, the range of those groups): a kernel outside is in no
// group's list, so the lists (and their order) are those of the whole block's. False: no corners.
bool SurfaceReconstructor::gatherBlockKernels(const Vec3i& g0, const BlockMask& corners,
                                              AnisotropicCandidates& blk) const {
    const float L = settings_.effectiveLeafSize();
    const float R = kernels_.settings().kernelRadius;
    const Vec3f lo = lattice_.corner(g0.x(), g0.y(), g0.z());
    const Vec3f hi = lo.array() + 7.0f * L;
    const float reach = R + 0.5f * std::sqrt(3.0f) * L;
    uint64_t plane = 0; // bit x + 8 y: a corner in some layer
    int zMin = 8, zMax = -1;
    for (int w = 0; w < 8; ++w)
        if (corners[size_t(w)]) {
            plane |= corners[size_t(w)];
            zMin = std::min(zMin, w);
            zMax = std::max(zMax, w);
        }
    if (!plane)
        return false;
    uint64_t columns = plane; // bit x: a corner in some row
    columns |= columns >> 32;
    columns |= columns >> 16;
    columns |= columns >> 8;
    columns &= 0xFFu;
    const int xMin = std::countr_zero(columns), xMax = 63 - std::countl_zero(columns);
    const int yMin = std::countr_zero(plane) / 8, yMax = (63 - std::countl_zero(plane)) / 8;
    const int gMin[3] = {xMin & ~1, yMin & ~1, zMin & ~1}, gMax[3] = {xMax & ~1, yMax & ~1, zMax & ~1};
    const float margin = 1e-3f * L; // rounding: the box holds every used group's ball
    Vec3f keepLo, keepHi;
    for (int a = 0; a < 3; ++a) {
        keepLo[a] = std::max(lo[a] - R, lo[a] + (float(gMin[a]) + 0.5f) * L - reach - margin);
        keepHi[a] = std::min(hi[a] + R, lo[a] + (float(gMax[a]) + 0.5f) * L + reach + margin);
    }
    const float shift = kernels_.maxShift() + margin;
    blk.clear();
    kernels_.gather(grid_, keepLo.array() - shift, keepHi.array() + shift, keepLo, keepHi, lo, blk);
    return true;
}

void SurfaceReconstructor::evaluateAnisotropicCorners() {
    // As evaluateCorners: the kernels that can reach the block are copied once (found by their
    // particle's position, within R + the largest centre shift), then filtered per 2x2x2 group.
    const float L = settings_.effectiveLeafSize();
    const float R = kernels_.settings().kernelRadius;
    const float iso = settings_.isoLevel;
    field_.evaluate([&](const Vec3i& g0, const BlockMask& corners, float* phi) {
        CornerScratch& scratch = cornerScratch_.local();
        AnisotropicCandidates& blk = scratch.blockKernels;
        AnisotropicCandidates& cand = scratch.groupKernels;
        const Vec3f lo = lattice_.corner(g0.x(), g0.y(), g0.z());
        const float reach = R + 0.5f * std::sqrt(3.0f) * L, reach2 = reach * reach;
        if (!gatherBlockKernels(g0, corners, blk))
            return;
        // Filtered in three steps (the groups' z slab, their row, the group): a kernel is tested
        // about 1 + 4 x 1/2 + 16 x 1/4 times per block instead of 64. The slab's and the row's
        // centres are copied (compacted eight at a time), so each step reads contiguous arrays.
        // A row keeps the cylinder around its groups' centres (pi/4 of the square's kernels),
        // grown by a margin so that it holds their balls despite the rounding of the centres.
        const float rowReach = reach + 1e-3f * L, rowReach2 = rowReach * rowReach;
        std::vector<uint32_t>&slab = scratch.slab, &row = scratch.row, &group = scratch.group;
        std::vector<float>&rx = scratch.rx, &ry = scratch.ry, &rz = scratch.rz;
        std::vector<float>&sx = scratch.sx, &sy = scratch.sy, &sz = scratch.sz;
        const size_t room = blk.count + AnisotropicCandidates::kLanes; // the filters' last batch
        for (auto* v : {&slab, &row, &group})
            if (v->size() < room)
                v->resize(room);
        for (auto* v : {&rx, &ry, &rz, &sx, &sy, &sz})
            if (v->size() < room)
                v->resize(room);
        for (int gz = 0; gz < 8; gz += 2) {
            if (!(corners[size_t(gz)] | corners[size_t(gz + 1)]))
                continue;
            const float relZ = (float(gz) + 0.5f) * L;
            const size_t ns = keepNear(blk.z.data(), blk.x.data(), blk.y.data(), blk.z.data(), nullptr,
                                       blk.count, relZ, reach, slab.data(), sx.data(), sy.data(), sz.data());
            for (int gy = 0; gy < 8; gy += 2) {
                const uint64_t rows = (corners[size_t(gz)] | corners[size_t(gz + 1)]);
                if (!(rows & (0xFFFFull << (8 * gy))))
                    continue;
                const float relY = (float(gy) + 0.5f) * L;
                const size_t nr =
                    keepNearLine(sy.data(), sz.data(), sx.data(), sy.data(), sz.data(), slab.data(), ns, relY,
                                 relZ, rowReach2, row.data(), rx.data(), ry.data(), rz.data());
                for (int gx = 0; gx < 8; gx += 2) {
                    const uint64_t groupBits = (0x303ull << (gx + 8 * gy));
                    if (!(rows & groupBits))
                        continue;
                    const Vec3f centre =
                        lattice_.corner(g0.x() + gx, g0.y() + gy, g0.z() + gz).array() + 0.5f * L;
                    const Vec3f rel = centre - lo;
                    cand.assignWithin(blk, rx.data(), ry.data(), rz.data(), row.data(), nr, rel, reach2,
                                      group.data());
                    // The group's corners, summed in one call (two at a time).
                    float ox[8], oy[8], oz[8], f[8];
                    int at[8], nc = 0;
                    for (int dz = 0; dz < 2; ++dz)
                        for (int dy = 0; dy < 2; ++dy)
                            for (int dx = 0; dx < 2; ++dx) {
                                const int lx = gx + dx, ly = gy + dy, lz = gz + dz;
                                const int bit = lx + 8 * ly;
                                if (!((corners[size_t(lz)] >> bit) & 1u))
                                    continue;
                                const Vec3f x = lattice_.corner(g0.x() + lx, g0.y() + ly, g0.z() + lz);
                                const Vec3f o = x - centre;
                                ox[nc] = o.x();
                                oy[nc] = o.y();
                                oz[nc] = o.z();
                                at[nc++] = bit + 64 * lz;
                            }
                    anisotropicFieldSums(cand, ox, oy, oz, nc, f);
                    for (int p = 0; p < nc; ++p)
                        phi[at[p]] = iso - f[p];
                }
            }
        }
    });
}

void SurfaceReconstructor::finishMesh() {
    // Mesh smoothing (anisotropic field), normals from the field's gradient, vertex velocities.
    TriangleMesh& mesh = result_.mesh;
    const size_t nv = mesh.vertices.size();
    const bool anisotropic = settings_.field == SurfaceField::Anisotropic;
    const bool smooth = anisotropic && settings_.meshSmoothingIterations > 0;
    const bool velocities = !givenVelocities_.empty();
    mesh.velocities.clear();
    if (velocities) {
        grid_.gather(givenVelocities_, vs_); // sorted order, beside xs_
        mesh.velocities.resize(nv);
    }
    if (anisotropic && nv > 0 && (smooth || settings_.computeNormals || velocities)) {
        // The smoother's serial preparation (one-rings, small pieces, volume) needs only the
        // triangles: it runs beside the parallel vertex pass.
        auto pass = [&] { vertexFieldPass(smooth, settings_.computeNormals, velocities); };
        if (smooth)
            tbb::parallel_invoke([&] { smoother_.prepare(mesh); }, pass);
        else
            pass();
    }
    if (smooth && nv > 0)
        smoother_.smoothPrepared(mesh, vertexWeight_, settings_.meshSmoothingIterations);
    if (!velocities || anisotropic)
        return;
    // The distance field has no kernel lists: W = (1 - d^2 / R^2)^3 over the particles within R.
    const float R = settings_.kernelRadiusFactor * settings_.particleRadius;
    const float invR2 = 1.0f / (R * R);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, nv, 1024), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t v = r.begin(); v < r.end(); ++v) {
            float sw = 0.0f;
            Vec3f sv = Vec3f::Zero();
            grid_.forEachNeighbor(mesh.vertices[v], R, xs_, [&](uint32_t j, const Vec3f&, float r2) {
                const float q = 1.0f - r2 * invR2;
                const float w = q * q * q;
                sw += w;
                sv += w * vs_[j];
            });
            mesh.velocities[v] = sw > 0.0f ? Vec3f(sv / sw) : Vec3f::Zero();
        }
    });
}

struct SurfaceReconstructor::VertexFieldJob {
    bool weights, normals, velocities;
    float g, R, reach, reach2, find;
    Vec3i superDims;
};

// Sorts the vertices by group of 2L and super-group (vertexKeys_), and marks where each group
// (groupStart_) and each super-group's groups (superStart_) begin.
void SurfaceReconstructor::groupVertices(float invG, const Vec3i& dims, const Vec3i& superDims) {
    const TriangleMesh& mesh = result_.mesh;
    const size_t nv = mesh.vertices.size();
    // key = super-group (z, y, x major) * 8 + the group's octant in it: the groups of one
    // super-group are consecutive once sorted.
    vertexKeys_.resize(nv);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, nv, 8192), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t v = r.begin(); v < r.end(); ++v) {
            const Vec3f u = (mesh.vertices[v] - lattice_.origin) * invG;
            uint64_t key = 0, octant = 0;
            for (int a = 2; a >= 0; --a) {
                const int c = std::clamp(int(std::floor(u[a])) + 1, 0, dims[a] - 1);
                key = key * uint64_t(superDims[a]) + uint64_t(c >> 1);
                octant = octant * 2 + uint64_t(c & 1);
            }
            vertexKeys_[v] = {key * 8 + octant, uint32_t(v)};
        }
    });
    // Small meshes (the live loop's): a serial radix sort, no parallel region; large ones: a
    // parallel sort without the radix sort's second buffer (the 1 M block's workspace). The same order.
    if (nv <= kRadixSortedVertices) {
        const uint64_t maxKey =
            uint64_t(superDims.x()) * uint64_t(superDims.y()) * uint64_t(superDims.z()) * 8;
        sortByKey(vertexKeys_, vertexKeysTmp_, maxKey);
    } else {
        tbb::parallel_sort(vertexKeys_.begin(), vertexKeys_.end());
    }
    groupStart_.clear();
    superStart_.clear();
    for (size_t k = 0; k < nv; ++k)
        if (k == 0 || vertexKeys_[k].first != vertexKeys_[k - 1].first) {
            if (k == 0 || (vertexKeys_[k].first >> 3) != (vertexKeys_[k - 1].first >> 3))
                superStart_.push_back(uint32_t(groupStart_.size()));
            groupStart_.push_back(uint32_t(k));
        }
    superStart_.push_back(uint32_t(groupStart_.size()));
    groupStart_.push_back(uint32_t(nv));
}

void SurfaceReconstructor::vertexFieldPass(bool weights, bool normals, bool velocities) {
    // One pass over the marching-cubes vertices (before smoothing), grouped by cubes of 2L (like the
    // corners' 2x2x2 groups): a group copies the kernels within R + its half diagonal of its centre
    // once, and each vertex sums their gradients in one SIMD pass:
    //  - the normal -grad f / |grad f| (the field's; smoothing moves a vertex by a fraction of L,
    //    over which the field's direction barely turns);
    //  - the feature weight of the smoothing (Loeschner et al. 2023): the kernels centred within R
    //    of the vertex. Over bulk fluid a vertex sees ~13 (half a ball of radius 2 d0, minus the gap
    //    to the surface); near a drop, a filament or a rim only a few, and it is not moved;
    //  - the velocity: sum W v / sum W over the same kernels centred within R of the vertex,
    //    W = (1 - d^2 / R^2)^3, v their particles' velocities (at the vertex as marching cubes
    //    placed it: smoothing moves it by a fraction of L).
    TriangleMesh& mesh = result_.mesh;
    const size_t nv = mesh.vertices.size();
    const float g = 2.0f * lattice_.cell, invG = 1.0f / g;
    const float R = kernels_.settings().kernelRadius;
    const Vec3i dims = (lattice_.dims.array() + 3) / 2 + 2; // groups per axis, with a margin
    const Vec3i superDims = (dims.array() + 1) / 2;         // 2x2x2 groups per super-group
    groupVertices(invG, dims, superDims);
    if (normals && mesh.normals.size() != nv)
        mesh.normals.assign(nv, Vec3f::UnitY());
    if (weights)
        vertexWeight_.resize(nv);
    const float reach = R + 0.5f * std::sqrt(3.0f) * g * 1.001f, reach2 = reach * reach;
    const float find = reach + kernels_.maxShift();
    const VertexFieldJob job{weights, normals, velocities, g, R, reach, reach2, find, superDims};
    tbb::parallel_for(tbb::blocked_range<size_t>(0, superStart_.size() - 1, 2),
                      [&](const tbb::blocked_range<size_t>& r) {
                          CornerScratch& scratch = cornerScratch_.local();
                          for (size_t sup = r.begin(); sup < r.end(); ++sup)
                              vertexFieldSuperGroup(job, sup, scratch);
                      });
}

void SurfaceReconstructor::vertexFieldSuperGroup(const VertexFieldJob& job, size_t sup,
                                                 CornerScratch& scratch) {
    const float g = job.g, reach = job.reach;
    // The super-group's kernels: those centred within reach of the box of its group
    // centres, found once in the grid (cells of the box grown by find). A group's
    // candidates are then filtered from this contiguous list: the same kernels in the
    // same order (grid cells z, y, x, then sorted index) as a grid search of its own.
    uint64_t superKey = vertexKeys_[groupStart_[superStart_[sup]]].first >> 3;
    Vec3i first; // group coordinates of octant 0
    for (int a = 0; a < 3; ++a) {
        first[a] = 2 * int(superKey % uint64_t(job.superDims[a]));
        superKey /= uint64_t(job.superDims[a]);
    }
    // A group's centre, as the group's own search would take it.
    auto groupCentre = [&](uint32_t octant) {
        Vec3f c;
        for (int a = 0; a < 3; ++a)
            c[a] = lattice_.origin[a] + (float(first[a] + int((octant >> a) & 1u) - 1) + 0.5f) * g;
        return c;
    };
    // The box of the centres of the groups that hold vertices (often half the octants):
    // a smaller box keeps the same kernels for each of them, in the same order.
    uint32_t anyLow = 0, anyHigh = 0; // per axis bit: some group at the low / high side
    for (uint32_t grp = superStart_[sup]; grp < superStart_[sup + 1]; ++grp) {
        const auto octant = uint32_t(vertexKeys_[groupStart_[grp]].first & 7u);
        anyLow |= ~octant & 7u;
        anyHigh |= octant;
    }
    const Vec3f lo = groupCentre(~anyLow & 7u), hi = groupCentre(anyHigh);
    const float margin = 1e-4f * g; // the box holds each group's ball despite rounding
    const Vec3f klo = lo.array() - (reach + margin), khi = hi.array() + (reach + margin);
    AnisotropicCandidates& super = scratch.blockKernels; // absolute centres
    super.clear();
    const float findBox = job.find + margin;
    kernels_.gather(grid_, lo.array() - findBox, hi.array() + findBox, klo, khi, Vec3f::Zero(), super,
                    &scratch.superIds);
    for (uint32_t grp = superStart_[sup]; grp < superStart_[sup + 1]; ++grp)
        vertexFieldGroup(job, grp, groupCentre(uint32_t(vertexKeys_[groupStart_[grp]].first & 7u)), scratch);
}

// One group's vertices: its kernels filtered from the super-group's (scratch.blockKernels),
// then per vertex the velocity, the normal and the smoothing weight.
void SurfaceReconstructor::vertexFieldGroup(const VertexFieldJob& job, uint32_t grp, const Vec3f& centre,
                                            CornerScratch& scratch) {
    constexpr float kFew = 4.0f, kMany = 10.0f;
    TriangleMesh& mesh = result_.mesh;
    const float R = job.R;
    const bool weights = job.weights, normals = job.normals, velocities = job.velocities;
    const AnisotropicCandidates& super = scratch.blockKernels;
    AnisotropicCandidates& cand = scratch.groupKernels;
    std::vector<uint32_t>& kept = scratch.group; // positions in super
    if (kept.size() < super.count + AnisotropicCandidates::kLanes)
        kept.resize(super.count + AnisotropicCandidates::kLanes);
    const size_t nk = cand.assignWithin(super, super.x.data(), super.y.data(), super.z.data(), nullptr,
                                        super.count, centre, job.reach2, kept.data());
    if (velocities) {
        const size_t np = cand.padded();
        for (std::vector<float>* a : {&scratch.vx, &scratch.vy, &scratch.vz})
            if (a->size() < np)
                a->resize(std::max(np, 2 * a->size()));
        for (size_t k = 0; k < np; ++k) {
            const Vec3f u = k < nk ? vs_[scratch.superIds[kept[k]]] : Vec3f::Zero();
            scratch.vx[k] = u.x();
            scratch.vy[k] = u.y();
            scratch.vz[k] = u.z();
        }
    }
    for (uint32_t k = groupStart_[grp]; k < groupStart_[grp + 1]; ++k) {
        const uint32_t v = vertexKeys_[k].second;
        if (velocities && !weights && !normals) {
            mesh.velocities[v] = kernelWeightedMean(cand, mesh.vertices[v] - centre, R, scratch.vx.data(),
                                                    scratch.vy.data(), scratch.vz.data());
            continue;
        }
        if (!weights && !normals)
            continue;
        int near = 0;
        const Vec3f grad =
            velocities
                ? anisotropicFieldGradientAndMean(cand, mesh.vertices[v] - centre, R, near, scratch.vx.data(),
                                                  scratch.vy.data(), scratch.vz.data(), mesh.velocities[v])
                : anisotropicFieldGradient(cand, mesh.vertices[v] - centre, R, &near);
        const float len = grad.norm();
        if (normals && len > 0.0f && std::isfinite(len))
            mesh.normals[v] = -grad / len; // f grows inwards
        if (weights) {
            const float t = std::clamp((float(near) - kFew) / (kMany - kFew), 0.0f, 1.0f);
            vertexWeight_[v] = t * t * (3.0f - 2.0f * t);
        }
    }
}

void SurfaceReconstructor::reconstruct(std::span<const Vec3f> positions, std::span<const float> densities,
                                       const SurfaceSettings& settings, std::span<const Vec3f> velocities) {
    if (!velocities.empty() && velocities.size() != positions.size())
        throw std::invalid_argument(
            "surface reconstruction: velocity array size differs from the particle count");
    struct Reset {
        SurfaceReconstructor& r;
        ~Reset() { r.givenVelocities_ = {}; }
    } reset{*this};
    givenVelocities_ = velocities;
    reconstruct(positions, densities, settings);
}

namespace {

// Throws std::invalid_argument for a densities array of the wrong size or a non-finite position.
void checkInput(std::span<const Vec3f> positions, std::span<const float> densities) {
    const size_t n = positions.size();
    if (!densities.empty() && densities.size() != n) {
        std::ostringstream s;
        s << "surface reconstruction: " << densities.size() << " densities for " << n << " particles";
        throw std::invalid_argument(s.str());
    }
    for (size_t i = 0; i < n; ++i)
        if (!positions[i].allFinite()) {
            std::ostringstream s;
            s << "surface reconstruction: particle " << i << " has a non-finite position";
            throw std::invalid_argument(s.str());
        }
}

// Yu & Turk 2013's parameters from the settings (particle radius r, kernel radius R).
AnisotropySettings anisotropySettingsOf(const SurfaceSettings& settings, float r, float R) {
    AnisotropySettings a;
    a.kernelRadius = R;
    a.covarianceRadius = settings.anisotropyRadiusFactor * R;
    a.particleVolume = 8.0f * r * r * r;
    a.kr = settings.anisotropyKr;
    a.kn = settings.anisotropyKn;
    a.nEps = settings.anisotropyNeps;
    a.smoothing = settings.centreSmoothing;
    a.iso = settings.isoLevel;
    a.shiftLimit = r;
    return a;
}

} // namespace

void SurfaceReconstructor::resetResult(size_t n) {
    SurfaceStats& st = result_.stats;
    st = SurfaceStats{};
    st.particles = n;
    result_.leaves.clear();
    result_.mesh.clear();
    result_.lambda.resize(n);
    result_.surfaceFlag.resize(n);
}

void SurfaceReconstructor::stampTotals(Clock::time_point t0) {
    result_.stats.tTotalMs = msSince(t0);
    result_.stats.peakBytes = workspaceBytes();
}

void SurfaceReconstructor::setUpLattice(const Vec3f& origin, const Vec3f& ext) {
    const float L = settings_.effectiveLeafSize();
    lattice_.origin = origin;
    lattice_.cell = L;
    for (int a = 0; a < 3; ++a)
        lattice_.dims[a] = std::max(1, int(std::ceil(double(ext[a]) / double(L))));
    depth_ = Octree_Shao2016::depthFor(lattice_.dims);
    result_.stats.cubesUniform = lattice_.cellCount();
}

void SurfaceReconstructor::buildMethodCells() {
    SurfaceStats& st = result_.stats;
    const SurfaceMethod method = settings_.method;
    buildCells(method, blocks_, false);
    st.cubes = countCells(blocks_);
    if (method == SurfaceMethod::Octree) {
        const auto& c = octree_.counts();
        st.cubesOctree = st.cubes;
        st.octreeNodes = c.nodes;
        st.octreeLeaves = c.leaves;
        st.octreeDepth = uint64_t(depth_);
    }
    if (method == SurfaceMethod::Narrow)
        st.cubesNarrow = st.cubes;
    if (method == SurfaceMethod::Sparse)
        st.cubesSparse = st.cubes;
    field_.setCells(lattice_, blocks_);
    st.corners = field_.corners();
    st.blocks = field_.blockCount();
}

void SurfaceReconstructor::computeKernels(const AnisotropySettings& a) {
    const SurfaceSettings& settings = settings_;
    const size_t n = xs_.size();
    // Surface particles only (the others keep isotropic kernels); all without detection.
    anisotropic_.resize(n);
    if (settings.detectSurface)
        for (size_t k = 0; k < n; ++k)
            anisotropic_[k] = lambda_[k] <= settings.lambdaMin ? 1 : 0;
    else
        std::fill(anisotropic_.begin(), anisotropic_.end(), uint8_t(1));
    // With detection, its sorted position arrays (no second copy: 12 MB at 1 M particles).
    std::array<const float*, 3> arrays{nullptr, nullptr, nullptr};
    if (settings.detectSurface)
        arrays = detection_.sortedPositions();
    kernels_.compute(
        grid_, xs_, anisotropic_, anisotropic_, a,
        [this]() -> CovarianceScratch& { return cornerScratch_.local().covariance; }, arrays);
    result_.stats.anisotropicParticles = kernels_.anisotropicCount;
}

void SurfaceReconstructor::countBaselineCells() {
    const SurfaceSettings& settings = settings_;
    SurfaceStats& st = result_.stats;
    for (SurfaceMethod m : {SurfaceMethod::Octree, SurfaceMethod::Narrow, SurfaceMethod::Sparse}) {
        if (m == settings.method)
            continue;
        if (!settings.detectSurface && m != SurfaceMethod::Sparse)
            continue; // needs surface particles
        if (m == SurfaceMethod::Narrow && settings.method == SurfaceMethod::Octree &&
            settings.sEnlargementFactor == 1.0f) {
            st.cubesNarrow = st.cubes; // same rule (box distance <= R to a surface particle)
            continue;
        }
        try {
            buildCells(m, countBlocks_, true);
        } catch (const std::length_error&) {
            continue; // too large to count: stays 0
        }
        const uint64_t c = countCells(countBlocks_);
        if (m == SurfaceMethod::Octree)
            st.cubesOctree = c;
        if (m == SurfaceMethod::Narrow)
            st.cubesNarrow = c;
        if (m == SurfaceMethod::Sparse)
            st.cubesSparse = c;
    }
}

void SurfaceReconstructor::reconstruct(std::span<const Vec3f> positions, std::span<const float> densities,
                                       const SurfaceSettings& settings) {
    const auto t0 = Clock::now();
    settings.validate();
    settings_ = settings;
    const size_t n = positions.size();
    checkInput(positions, densities);
    resetResult(n);
    SurfaceStats& st = result_.stats;
    const float r = settings.particleRadius;
    const float L = settings.effectiveLeafSize();
    const float R = settings.kernelRadiusFactor * r;
    const float h = settings.supportFactor * r;
    st.leafSize = L;
    if (n == 0) {
        xs_.clear();
        stampTotals(t0);
        return;
    }

    // The particles' box: checked before any grid is sized, and the lattice's box below.
    Aabb box;
    for (const Vec3f& p : positions)
        box.extend(p);
    const float margin = R + L;
    const Vec3f ext = box.extent().array() + 2.0f * margin;
    checkSpan(ext, L);

    // --- Detection (Marrone 2010) ---
    grid_.setDomainFromPoints(positions, std::max(h, R));
    grid_.build(positions);
    grid_.gather(positions, xs_);
    detect(densities, t0);
    if (!settings.computeMesh) {
        stampTotals(t0);
        return;
    }

    // --- Lattice shared by all methods: every corner within R of a particle lies inside. ---
    setUpLattice(box.min.array() - margin, ext);
    // --- Cells of the chosen method (octree: Shao 2016 §5) ---
    auto cells = [&] {
        const auto t1 = Clock::now();
        buildMethodCells();
        st.tOctreeMs = msSince(t1);
    };

    // --- The field at the needed corners: anisotropic kernels (Yu & Turk 2013) or the distance
    //     field (Zhu & Bridson 2005, Solenthaler 2007) ---
    auto t2 = Clock::now();
    if (settings.field == SurfaceField::Anisotropic) {
        // The kernels need only the particles: they are computed beside the cells, whose build
        // is partly serial (tOctreeMs and tAnisotropyMs overlap).
        tbb::parallel_invoke(cells, [&] {
            computeKernels(anisotropySettingsOf(settings, r, R));
            st.tAnisotropyMs = msSince(t2);
        });
        evaluateAnisotropicCorners();
        // The field's wall time beyond the cells' (the two overlap), so that detection + octree +
        // distance add up to the wall time of the three (Tode, FrameSurface::odeMs).
        st.tDistanceMs = std::max(0.0, msSince(t2) - st.tOctreeMs);
    } else {
        cells();
        t2 = Clock::now();
        evaluateCorners();
        st.tDistanceMs = msSince(t2);
    }

    // --- Marching cubes (Lorensen & Cline 1987), then smoothing, normals and velocities ---
    const auto t3 = Clock::now();
    // The anisotropic field's normals are its gradient's (finishMesh), not the faces'.
    field_.marchingCubes(result_.mesh, settings.computeNormals && settings.field == SurfaceField::Distance);
    const auto t4 = Clock::now();
    finishMesh();
    st.tSmoothMs = msSince(t4);
    st.vertices = result_.mesh.vertices.size();
    st.triangles = result_.mesh.triangles.size();
    st.tMcMs = msSince(t3);
    stampTotals(t0);

    // --- The other methods' cell counts (not timed in tTotal) ---
    if (settings.countBaselines)
        countBaselineCells();
}

uint64_t SurfaceReconstructor::workspaceBytes() const {
    // The grid's own buffers: cellStart (cells + 1), cursor (cells), order and keys (n each).
    const size_t gridBytes =
        (2 * grid_.cellCount() + 1) * sizeof(uint32_t) + 2 * grid_.pointCount() * sizeof(uint32_t);
    const auto& m = result_.mesh;
    size_t phiBytes = 0;
    for (const CornerScratch& c : cornerScratch_)
        phiBytes += (c.candidates.x.capacity() + c.candidates.y.capacity() + c.candidates.z.capacity()) *
                        sizeof(float) +
                    c.block.bytes() + c.blockKernels.bytes() + c.groupKernels.bytes() +
                    (c.rx.capacity() + c.ry.capacity() + c.rz.capacity() + c.sx.capacity() + c.sy.capacity() +
                     c.sz.capacity() + c.vx.capacity() + c.vy.capacity() + c.vz.capacity()) *
                        sizeof(float) +
                    (c.slab.capacity() + c.row.capacity() + c.group.capacity() + c.superIds.capacity()) *
                        sizeof(uint32_t);
    return gridBytes + xs_.capacity() * sizeof(Vec3f) +
           (rho_.capacity() + lambda_.capacity()) * sizeof(float) + surfaceXs_.capacity() * sizeof(Vec3f) +
           octree_.bytes() + dense_.bytes() + detection_.bytes() + phiBytes +
           (blocks_.capacity() + countBlocks_.capacity()) * sizeof(CellBlock) + field_.bytes() +
           result_.lambda.capacity() * sizeof(float) + result_.surfaceFlag.capacity() +
           result_.leaves.capacity() * sizeof(OctreeLeaf) + kernels_.bytes() + anisotropic_.capacity() +
           smoother_.bytes() + vertexWeight_.capacity() * sizeof(float) + vs_.capacity() * sizeof(Vec3f) +
           m.velocities.capacity() * sizeof(Vec3f) +
           (vertexKeys_.capacity() + vertexKeysTmp_.capacity()) * sizeof(vertexKeys_[0]) +
           groupStart_.capacity() * sizeof(uint32_t) +
           (m.vertices.capacity() + m.normals.capacity()) * sizeof(Vec3f) +
           m.triangles.capacity() * sizeof(m.triangles[0]);
}

} // namespace octo
