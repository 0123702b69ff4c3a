#include "sph/FluidModel.h"

#include "spatial/Lanes.h"
#include "sph/ParallelUtil.h"

#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace octo {

void FluidModel::setConfig(const SphConfig& config) {
    if (!(config.particleRadius > 0.0f) || !(config.restDensity > 0.0f))
        throw std::invalid_argument("SphSolver: particle radius and rest density must be > 0");
    if (config.minIterations < 1 || config.maxIterations < config.minIterations)
        throw std::invalid_argument("SphSolver: need 1 <= minIterations <= maxIterations");
    if (!(config.timeStepMin > 0.0f) || config.timeStepMax < config.timeStepMin)
        throw std::invalid_argument("SphSolver: need 0 < timeStepMin <= timeStepMax");
    config_ = config;
    deriveConstants();
}

void FluidModel::deriveConstants() {
    const float r = config_.particleRadius;
    d0_ = 2.0f * r;
    h_ = 4.0f * r;
    kernel_ = SphKernel(h_, config_.kernel);
    // The start lattice (spacing d0) at rest density: the cubic spline sums to 1 on it, Wendland C2
    // to 1.034, so its mass is scaled by the lattice sum (SphKernel::latticeSum).
    mass_ = config_.restDensity * d0_ * d0_ * d0_;
    if (config_.kernel != KernelKind::CubicSpline)
        mass_ /= kernel_.latticeSum(d0_);
    table_.setKernel(kernel_);
    forces_.setParameters(config_, h_, table_);
    boundary_.setKernel(h_, config_.restDensity, config_.kernel);

    // Prototype particle with a full neighbourhood on the rest lattice (spacing d0).
    Vec3f sumGrad = Vec3f::Zero();
    float sumGradDot = 0.0f;
    const int reach = int(std::ceil(h_ / d0_));
    for (int i = -reach; i <= reach; ++i)
        for (int j = -reach; j <= reach; ++j)
            for (int k = -reach; k <= reach; ++k) {
                const Vec3f x = d0_ * Vec3f(float(i), float(j), float(k));
                if (x.squaredNorm() >= h_ * h_ || (i == 0 && j == 0 && k == 0))
                    continue;
                const Vec3f g = kernel_.gradW(x);
                sumGrad += g;
                sumGradDot += g.dot(g);
            }
    // delta = -1 / (beta (-sum grad . sum grad - sum grad.grad)), beta = 2 dt^2 m^2 / rho0^2.
    const float rho0 = config_.restDensity;
    protoDenominator_ = 2.0f * mass_ * mass_ * (sumGrad.dot(sumGrad) + sumGradDot);
    deltaUnit_ = rho0 * rho0 / protoDenominator_;
}

void FluidModel::setParticles(std::vector<Vec3f> positions, std::vector<Vec3f> velocities) {
    for (const Vec3f& p : positions)
        if (!p.allFinite())
            throw std::invalid_argument("SphSolver: non-finite particle position");
    if (velocities.empty())
        velocities.assign(positions.size(), Vec3f::Zero());
    if (velocities.size() != positions.size())
        throw std::invalid_argument("SphSolver: velocities size mismatch");
    const size_t n = positions.size();
    state.positions = std::move(positions);
    state.velocities = std::move(velocities);
    state.densities.assign(n, config_.restDensity);
    state.pressures.assign(n, 0.0f);
    state.ids.resize(n);
    for (size_t i = 0; i < n; ++i)
        state.ids[i] = uint32_t(i);
    resizeWorkArrays(n);
    time = 0.0;
    last = SphStepResult{};
}

void FluidModel::resizeWorkArrays(size_t n) {
    // The per-step arrays only need the size; the lagged tension/vorticity fields restart.
    for (auto& p : predicted)
        p.resize(n);
    predictedVelocity.resize(n);
    accelNonPressure.resize(n);
    accelPressure.assign(n, Vec3f::Zero());
    predictedDensity.resize(n);
    forces_.resize(n);
    lists.fluidBegin.resize(n);
    lists.fluidCount.resize(n);
    lists.boundaryBegin.resize(n);
    lists.boundaryCount.resize(n);
    lists.blocks.resize((n + kBlock - 1) / kBlock);
}

bool FluidModel::removeParticles(std::span<const uint8_t> drop) {
    if (drop.size() != state.size())
        throw std::invalid_argument("SphSolver::removeParticles: mask size mismatch");
    size_t k = 0;
    for (size_t i = 0; i < drop.size(); ++i)
        if (!drop[i]) {
            state.positions[k] = state.positions[i];
            state.velocities[k] = state.velocities[i];
            state.densities[k] = state.densities[i];
            state.pressures[k] = state.pressures[i];
            state.ids[k] = state.ids[i];
            ++k;
        }
    if (k == drop.size())
        return false;
    state.resize(k);
    resizeWorkArrays(k); // the neighbour lists are rebuilt by the next step
    return true;
}

void FluidModel::sortParticles(std::initializer_list<std::vector<float>*> sortedAlong) {
    if (config_.domain.empty())
        grid_.setDomainFromPoints(state.positions, h_);
    else if (grid_.cellSize() != h_ || grid_.domain().min != config_.domain.enlarged(h_).min ||
             grid_.domain().max != config_.domain.enlarged(h_).max)
        grid_.setDomain(config_.domain.enlarged(h_), h_);
    grid_.build(state.positions);
    const auto order = grid_.order();
    // Every per-particle array, and the search's position columns, in one parallel pass: a pass
    // per array made ten parallel regions a step, each a wake-up of the threads.
    std::vector<Vec3f>* vecs[3] = {&state.positions, &state.velocities, nullptr};
    floatsAlong_.assign({&state.densities, &state.pressures});
    std::vector<float>* omega = nullptr;
    forces_.laggedFields(vecs[2], omega); // the forces beyond the paper
    if (omega)
        floatsAlong_.push_back(omega);
    floatsAlong_.insert(floatsAlong_.end(), sortedAlong.begin(), sortedAlong.end());
    const size_t n = order.size(), nVecs = vecs[2] ? 3 : 2, nFloats = floatsAlong_.size();
    if (scratchFloat_.size() < nFloats)
        scratchFloat_.resize(nFloats);
    for (size_t a = 0; a < nVecs; ++a)
        scratchVec_[a].resize(n);
    for (size_t a = 0; a < nFloats; ++a) {
        // A solver array of another size would be read out of bounds by the gather below (a
        // programming error, checked in Release too: one comparison per array and step).
        if (floatsAlong_[a]->size() != n)
            throw std::logic_error("FluidModel::sortParticles: an array sorted along the particles has " +
                                   std::to_string(floatsAlong_[a]->size()) + " entries for " +
                                   std::to_string(n) + " particles");
        scratchFloat_[a].resize(n);
    }
    scratchId_.resize(n);
    fluidColumns_.resize(n);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
        const uint32_t* ord = order.data();
        for (size_t a = 0; a < nVecs; ++a)
            for (size_t k = r.begin(); k < r.end(); ++k)
                scratchVec_[a][k] = (*vecs[a])[ord[k]];
        for (size_t a = 0; a < nFloats; ++a)
            for (size_t k = r.begin(); k < r.end(); ++k)
                scratchFloat_[a][k] = (*floatsAlong_[a])[ord[k]];
        for (size_t k = r.begin(); k < r.end(); ++k)
            scratchId_[k] = state.ids[ord[k]];
        for (size_t k = r.begin(); k < r.end(); ++k)
            fluidColumns_.set(k, scratchVec_[0][k]);
    });
    for (size_t a = 0; a < nVecs; ++a)
        vecs[a]->swap(scratchVec_[a]);
    for (size_t a = 0; a < nFloats; ++a)
        floatsAlong_[a]->swap(scratchFloat_[a]);
    state.ids.swap(scratchId_);
}

namespace {
// For each 4-bit mask, the lanes whose bit is set, ascending (the rest 0: written, then overwritten).
constexpr int32_t kCompact4[16][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0},
                                      {2, 0, 0, 0}, {0, 2, 0, 0}, {1, 2, 0, 0}, {0, 1, 2, 0},
                                      {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
                                      {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};
// Their counts (the default build targets SSE2, without a popcount instruction).
constexpr uint32_t kCount4[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

// The non-empty cells around one query cell, with their boxes (NeighborGrid::forEachCandidateCell).
struct CandidateCells {
    struct Cell {
        uint32_t begin, end;
        uint8_t ix, iy, iz; // place in the 3x3x3 block
    };
    Cell cells[27];
    int count = 0;
    Vec3i key{-1, -1, -1};
    float lo[3][3], hi[3][3]; // the block's cell bounds per axis (border cells reach to infinity)

    void gather(const NeighborGrid& grid, const Vec3f& x, float radius) {
        const Vec3i c = grid.cellOf(x);
        if (c == key) // particles are sorted by cell: consecutive ones share the candidates
            return;
        key = c;
        count = 0;
        assert(grid.cellSize() >= radius * (1.0f - 1e-6f)); // 27 cells reach the radius
        grid.forEachCandidateCell(
            x, radius, [&](uint32_t b, uint32_t e, const Vec3f& cellLo, const Vec3f& cellHi, const Vec3i& q) {
                cells[count++] = {b, e, uint8_t(q.x()), uint8_t(q.y()), uint8_t(q.z())};
                for (int a = 0; a < 3; ++a)
                    lo[a][q[a]] = cellLo[a], hi[a][q[a]] = cellHi[a];
            });
    }
    /// Appends to out[used..] every candidate j (not skip) with |x - xs[j]|^2 < r2, in ascending order
    /// per cell, branch-free (a neighbour test fails ~85 % of the time at random: a branch per
    /// candidate mispredicts); grows out as needed. Returns the new used.
    uint32_t append(const Vec3f& x, float r2, const PointColumns& xs, uint32_t skip,
                    std::vector<uint32_t>& out, uint32_t used) const {
        // Cells whose box is farther than the radius hold no neighbour: with cells of edge h about a
        // quarter of the 27 (corners and edges away from x), and of the candidates with them. The
        // others make runs where a cell's points follow the previous one's (cells adjacent in rank).
        uint32_t runBegin[27], runEnd[27];
        int nRuns = 0;
        size_t room = 0;
        // A cell's squared distance is a sum of one term per axis, and the block has 3 cells per
        // axis: 9 terms instead of 3 per cell; summed as Eigen's squaredNorm of the distance vector
        // (x + (y + z)), so the same cells pass.
        float d2[3][3];
        for (int a = 0; a < 3; ++a)
            for (int k = 0; k < 3; ++k) {
                const float d = std::max(std::max(lo[a][k] - x[a], x[a] - hi[a][k]), 0.0f);
                d2[a][k] = d * d;
            }
        for (int q = 0; q < count; ++q) {
            const Cell& c = cells[q];
            if (d2[0][c.ix] + (d2[1][c.iy] + d2[2][c.iz]) < r2) {
                if (nRuns > 0 && runEnd[nRuns - 1] == c.begin)
                    runEnd[nRuns - 1] = c.end;
                else
                    runBegin[nRuns] = c.begin, runEnd[nRuns++] = c.end;
                room += c.end - c.begin;
            }
        }
        // Four candidates at a time; the kept indices of each four are packed to the front
        // (ascending, so the lists equal the scalar loop's) and stored as one 16-byte write, which
        // may run 3 entries past the last one kept: out keeps that slack.
        if (out.size() < used + room + 3) // grows a few times in the first steps, then never
            out.resize(std::max(2 * out.size(), used + room + 3));
        uint32_t* dst = out.data();
        const Float4 px = broadcast4(x.x()), py = broadcast4(x.y()), pz = broadcast4(x.z());
        const Float4 r2v = broadcast4(r2);
        const Int4 lane = {0, 1, 2, 3};
        const Int4 skipv = Int4{} + int32_t(skip);
        for (int q = 0; q < nRuns; ++q) {
            const uint32_t e = runEnd[q];
            for (uint32_t j = runBegin[q]; j < e; j += 4) {
                // Lanes past the run's end read the next points (or the columns' padding), masked off.
                Float4 xj, yj, zj;
                std::memcpy(&xj, xs.x.data() + j, sizeof xj);
                std::memcpy(&yj, xs.y.data() + j, sizeof yj);
                std::memcpy(&zj, xs.z.data() + j, sizeof zj);
                const Float4 dx = px - xj, dy = py - yj, dz = pz - zj;
                const Float4 r2j = sum3(dx * dx, dy * dy, dz * dz); // (x - xj).squaredNorm()
                const Int4 idx = Int4{} + int32_t(j) + lane;
                const Int4 keep = (r2j < r2v) & (idx != skipv) & (lane < Int4{} + int32_t(e - j));
                const unsigned bits = laneBits4(keep);
                Int4 packed;
                std::memcpy(&packed, kCompact4[bits], sizeof packed);
                packed += Int4{} + int32_t(j);
                std::memcpy(dst + used, &packed, sizeof packed);
                used += kCount4[bits];
            }
        }
        return used;
    }
};
} // namespace

void FluidModel::buildNeighborLists() {
    const float h2 = h_ * h_;
    const NeighborGrid& bgrid = boundary_.grid();
    const auto xb = boundary_.sortedPositions();
    const bool hasBoundary = !xb.empty();
    const Vec3f* xs = state.positions.data();
    // fluidColumns_: written by sortParticles.
    if (boundaryMoved_) { // the walls stand still: only moving bodies make it per step
        boundaryColumns_.assign(xb);
        markCellsNearBoundary();
        boundaryMoved_ = false;
    }
    constexpr uint32_t none = std::numeric_limits<uint32_t>::max();
    forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        NeighborLists::Block& blk = lists.blocks[b];
        // The walls' grid is not aligned with the fluid's: the particles of one fluid cell lie in up
        // to 2 wall cells per axis, in turn. One set of candidates per parity of the wall cell's
        // coordinates keeps each of them (2 neighbouring cells differ in parity).
        CandidateCells fluidCells, boundaryCells[8];
        uint32_t nFluid = 0, nBoundary = 0;
        for (uint32_t i = begin; i < end; ++i) {
            const Vec3f xi = xs[i];
            fluidCells.gather(grid_, xi, h_);
            lists.fluidBegin[i] = nFluid;
            nFluid = fluidCells.append(xi, h2, fluidColumns_, i, blk.fluid, nFluid);
            lists.fluidCount[i] = nFluid - lists.fluidBegin[i];
            lists.boundaryBegin[i] = nBoundary;
            const Vec3i c = bgrid.cellOf(xi);
            if (hasBoundary && nearBoundary_[bgrid.rankOf(c)]) {
                CandidateCells& cells = boundaryCells[(c.x() & 1) | (c.y() & 1) << 1 | (c.z() & 1) << 2];
                cells.gather(bgrid, xi, h_);
                nBoundary = cells.append(xi, h2, boundaryColumns_, none, blk.boundary, nBoundary);
            }
            lists.boundaryCount[i] = nBoundary - lists.boundaryBegin[i];
        }
        blk.fluidPairs = nFluid;
        blk.boundaryPairs = nBoundary;
    });
    buildWallLists();
}

void FluidModel::markCellsNearBoundary() {
    // A boundary cell is near when a cell of its 3x3x3 block holds samples: the others (half of
    // the dam break's particles, 70 % at 30 k) have no boundary candidates, and the search skips
    // their blocks' gathers (27 cell lookups each).
    const NeighborGrid& bgrid = boundary_.grid();
    const auto xb = boundary_.sortedPositions();
    nearBoundary_.assign(bgrid.cellCount(), 0);
    const Vec3i top = bgrid.dims() - Vec3i::Ones();
    Vec3i last(-1, -1, -1);
    for (const Vec3f& x : xb) {
        const Vec3i c = bgrid.cellOf(x);
        if (c == last) // sorted by cell: a cell's samples are consecutive
            continue;
        last = c;
        const Vec3i c0 = (c - Vec3i::Ones()).cwiseMax(Vec3i::Zero()), c1 = (c + Vec3i::Ones()).cwiseMin(top);
        for (int z = c0.z(); z <= c1.z(); ++z)
            for (int y = c0.y(); y <= c1.y(); ++y)
                for (int xx = c0.x(); xx <= c1.x(); ++xx)
                    nearBoundary_[bgrid.rankOf(Vec3i(xx, y, z))] = 1;
    }
}

void FluidModel::buildWallLists() {
    // The fluid lists reversed: each wall sample's fluid neighbours, ascending i, so the extrapolated
    // pressure is summed in a fixed order. A counting sort in one thread, particle by particle: the
    // container's ~0.1 wall pairs per fluid pair are a few tens of microseconds of work, less than
    // the atomic counters, the sort of each list and the three parallel passes it replaced.
    const auto wall = boundary_.sortedWall();
    const size_t nb = wall.size(), n = state.size();
    auto forEachWallPair = [&](auto&& visit) { // (fluid particle i, wall sample k), ascending i
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t* bnb = lists.boundary(i);
            for (uint32_t q = 0, cnt = lists.boundaryCount[i]; q < cnt; ++q)
                if (wall[bnb[q]])
                    visit(i, bnb[q]);
        }
    };
    lists.wallBegin.assign(nb + 1, 0);
    forEachWallPair([&](uint32_t, uint32_t k) { ++lists.wallBegin[k + 1]; });
    lists.wallSamples.clear();
    for (size_t k = 0; k < nb; ++k) {
        if (lists.wallBegin[k + 1] > 0)
            lists.wallSamples.push_back(uint32_t(k));
        lists.wallBegin[k + 1] += lists.wallBegin[k];
    }
    lists.wallFluid.resize(lists.wallBegin[nb]);
    lists.wallCursor.assign(lists.wallBegin.begin(), lists.wallBegin.end() - 1);
    forEachWallPair([&](uint32_t i, uint32_t k) { lists.wallFluid[lists.wallCursor[k]++] = i; });
}

bool FluidModel::prepareStep(SphStepResult& res, float nextDt,
                             std::initializer_list<std::vector<float>*> sortedAlong) {
    const auto t0 = parallel::Clock::now();
    boundaryMoved_ |= boundary_.needsUpdate();
    boundary_.update();
    if (boundary_.hasForceTrackedObjects())
        boundary_.clearForces();
    if (state.size() == 0) {
        res.dt = nextDt;
        time += res.dt;
        last = res;
        return false;
    }
    sortParticles(sortedAlong);
    buildNeighborLists();
    res.msNeighbors = parallel::msSince(t0);
    return true;
}

float FluidModel::filterVelocities(float dt, float speedBefore, SphStepResult& res) {
    // Particle-scale velocity noise out of the committed velocities, as XSPH viscosity is
    // applied after the position update (VelocityFilter.h). The lists are this step's; pairs
    // that moved beyond h weigh 0 and both sides of a pair stay listed, so the weights stay
    // symmetric.
    const auto t0 = parallel::Clock::now();
    velocityFilter_.setRate(config_.velocityFilterRate);
    velocityFilter_.setLinearExact(config_.velocityFilterLinearExact);
    const float speedAfter = velocityFilter_.apply(
        config_.velocityFilter, dt, state.velocities, state.positions, mass_ / config_.restDensity, table_,
        [this](uint32_t i) { return std::span<const uint32_t>(lists.fluid(i), lists.fluidCount[i]); },
        [this](uint32_t i) { return state.densities[i] / config_.restDensity; });
    res.msNonPressure += parallel::msSince(t0);
    return std::max(speedBefore, speedAfter);
}

std::pair<size_t, size_t> FluidModel::containParticles() {
    // Safety net, not physics: a lone particle (p = 0 after clamping) that reaches a wall only
    // feels the boundary once its density exceeds rho0, and a fast one can slip between boundary
    // particles. Particles outside the container box are put back on its face and lose their
    // outward velocity. StepResult::contained counts them (normally 0); StepResult::escaped counts
    // those that had already crossed the walls' outer face, before the net moved them.
    const Aabb box = config_.containment;
    const Aabb escape = config_.escape.empty() ? box : config_.escape;
    std::atomic<size_t> count{0}, escapedCount{0};
    tbb::parallel_for(tbb::blocked_range<size_t>(0, state.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& r) {
                          size_t local = 0, localEscaped = 0;
                          for (size_t i = r.begin(); i < r.end(); ++i) {
                              Vec3f& x = state.positions[i];
                              if (box.contains(x))
                                  continue;
                              localEscaped += escape.contains(x) ? 0 : 1;
                              Vec3f& v = state.velocities[i];
                              for (int a = 0; a < 3; ++a) {
                                  if (x[a] < box.min[a]) {
                                      x[a] = box.min[a];
                                      v[a] = std::max(v[a], 0.0f);
                                  } else if (x[a] > box.max[a]) {
                                      x[a] = box.max[a];
                                      v[a] = std::min(v[a], 0.0f);
                                  }
                              }
                              ++local;
                          }
                          count.fetch_add(local, std::memory_order_relaxed);
                          escapedCount.fetch_add(localEscaped, std::memory_order_relaxed);
                      });
    return {count.load(), escapedCount.load()};
}

void FluidModel::bookSourceWork(float dt) {
    if (!forces_.sourcesActive()) {
        sourceWork_ = 0.0;
        return;
    }
    // Symplectic Euler: the kinetic energy's change is exactly sum_i m dt a_i . (v_old + v_new) / 2,
    // term by term over the accelerations; after the commit the old velocities are in
    // predictedVelocity.
    const Vec3f* vOld = predictedVelocity.data();
    const Vec3f* vNew = state.velocities.data();
    const Vec3f* aS = forces_.sourceAccelerations().data();
    const double power = tbb::parallel_deterministic_reduce(
        tbb::blocked_range<size_t>(0, state.size(), 8192), 0.0,
        [&](const tbb::blocked_range<size_t>& r, double acc) {
            for (size_t i = r.begin(); i < r.end(); ++i)
                acc += double(aS[i].dot(vOld[i] + vNew[i]));
            return acc;
        },
        std::plus<double>());
    sourceWork_ = 0.5 * double(mass_) * double(dt) * power;
}

} // namespace octo
