#pragma once
// The part of the SPH solver both pressure solvers share (SPlisHSPlasH's FluidModel, without its
// singletons): the particles, the constants derived from the configuration, the Z-order sort, the
// cached neighbour lists (fluid-fluid, fluid-boundary and the walls' reversed lists), the
// per-step work arrays, the non-pressure forces (NonPressureForces), the containment net and the
// step statistics. A pressure solver (PressureSolverBase) reads and writes these arrays in its
// own passes; the facade SphSolver owns one FluidModel and both solvers.
//
// Per step: update the boundary, sort the particles by Z-order cell, build the neighbour lists
// once (prepareStep); the pressure solver then runs the non-pressure pass and its iterations over
// the cached lists. Kernel values in the loops come from KernelTable (tabulated over |x|^2: no
// sqrt per pair).
#include "common/Types.h"
#include "spatial/KernelTable.h"
#include "spatial/NeighborGrid.h"
#include "spatial/PointColumns.h"
#include "spatial/SphKernel.h"
#include "sph/BoundaryForceBuffer.h"
#include "sph/BoundaryModel.h"
#include "sph/FluidState.h"
#include "sph/NonPressureForces.h"
#include "sph/SphConfig.h"
#include "sph/VelocityFilter.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

namespace octo {

class FluidModel {
public:
    /// Particles per block: the lists are stored per block, and one thread handles a block.
    static constexpr uint32_t kBlock = 256;

    /// Cached neighbour lists, CSR per block of particles: particle i's fluid neighbours are
    /// blocks[i / kBlock].fluid[fluidBegin[i] .. fluidBegin[i] + fluidCount[i]), its boundary
    /// neighbours (sorted boundary indices) likewise.
    struct NeighborLists {
        struct Block {
            // The lists; their sizes are capacities (kept across steps), the pairs in use are the
            // first fluidPairs / boundaryPairs.
            std::vector<uint32_t> fluid, boundary;
            uint32_t fluidPairs = 0, boundaryPairs = 0;
        };
        std::vector<Block> blocks;
        std::vector<uint32_t> fluidBegin, fluidCount, boundaryBegin, boundaryCount;
        // Wall samples (BoundaryModel::setWall: the container's walls) that have fluid neighbours,
        // and their fluid neighbours in CSR form (wallFluid[wallBegin[k] .. wallBegin[k + 1]) for
        // sorted boundary index k, ascending i).
        std::vector<uint32_t> wallSamples, wallBegin, wallFluid, wallCursor;

        const uint32_t* fluid(uint32_t i) const { return blocks[i / kBlock].fluid.data() + fluidBegin[i]; }
        const uint32_t* boundary(uint32_t i) const {
            return blocks[i / kBlock].boundary.data() + boundaryBegin[i];
        }
    };

    explicit FluidModel(BoundaryModel& boundary) : boundary_(boundary) {}

    /// Checks the configuration (throws std::invalid_argument) and derives mass, kernel and the
    /// prototype particle's delta.
    void setConfig(const SphConfig& config);
    const SphConfig& config() const { return config_; }

    /// New particles (velocities default to 0); time restarts at 0.
    void setParticles(std::vector<Vec3f> positions, std::vector<Vec3f> velocities);
    /// Removes the particles with drop[i] != 0; false if none was.
    bool removeParticles(std::span<const uint8_t> drop);

    /// Boundary update, sort and neighbour lists at the start of a step; the arrays in sortedAlong
    /// (a pressure solver's state kept across steps) follow the particle sort. False with no
    /// particles: then res.dt = nextDt is booked as the step.
    bool prepareStep(SphStepResult& res, float nextDt,
                     std::initializer_list<std::vector<float>*> sortedAlong);

    /// The non-pressure accelerations and the prediction v* = v + dt a, x* = x + dt v*
    /// (NonPressureForces.cpp).
    void computeNonPressure(float dt) { forces_.compute(*this, dt); }
    /// Puts leaked particles back; returns (contained, escaped) counted before the net acted.
    std::pair<size_t, size_t> containParticles();
    /// The velocity filter (VelocityFilter.h) on the committed velocities over this step's lists,
    /// with the strength of a step of dt, both solvers' last act of a step; its time goes to
    /// res.msNonPressure. Returns the fastest particle either side of it (speedBefore: the commit's),
    /// the speed the CFL bound and the statistics see.
    float filterVelocities(float dt, float speedBefore, SphStepResult& res);
    /// After a commit (old velocities in predictedVelocity): the work of the forces without a
    /// potential over the step (sourceWork()).
    void bookSourceWork(float dt);
    /// Called with a restarted attempt's dt before it runs (SphSolver::setBoundaryMotion).
    void moveBoundary(float dt) const {
        if (boundaryMotion_)
            boundaryMotion_(dt);
    }
    void setBoundaryMotion(std::function<void(float dt)> motion) { boundaryMotion_ = std::move(motion); }

    /// f(block, begin, end) over the blocks of kBlock particles, in parallel (one thread per block).
    template <class F> void forBlocks(F&& f) const {
        const size_t n = state.size();
        const size_t nBlocks = (n + kBlock - 1) / kBlock;
        tbb::parallel_for(tbb::blocked_range<size_t>(0, nBlocks, 1),
                          [&](const tbb::blocked_range<size_t>& r) {
                              for (size_t b = r.begin(); b < r.end(); ++b)
                                  f(b, uint32_t(b * kBlock), uint32_t(std::min(n, (b + 1) * kBlock)));
                          });
    }

    BoundaryModel& boundary() const { return boundary_; }
    const KernelTable& table() const { return table_; }
    const SphKernel& kernel() const { return kernel_; }
    float mass() const { return mass_; }
    float supportRadius() const { return h_; }
    float spacing() const { return d0_; }
    /// delta(dt) = deltaUnit / dt^2 (Solenthaler & Pajarola eq. 8), of the prototype particle.
    float deltaUnit() const { return deltaUnit_; }
    /// The prototype particle's 2 m^2 (|sum grad W|^2 + sum |grad W|^2) (deriveConstants).
    float protoDenominator() const { return protoDenominator_; }
    const NonPressureForces& forces() const { return forces_; }
    double attractionEnergy() const { return forces_.attractionEnergy(); }
    double sourceWork() const { return sourceWork_; }

    // The state and what the passes share; sized by setParticles / removeParticles.
    FluidState state;
    NeighborLists lists;
    // Predicted positions (two buffers: PCISPH's iterations alternate), velocities, the non-pressure
    // and pressure accelerations and the predicted density of the step.
    std::vector<Vec3f> predicted[2], predictedVelocity, accelNonPressure, accelPressure;
    std::vector<float> predictedDensity;
    // min(1, delta_i / delta_prototype) per particle (NonPressureForces.cpp): summed in the
    // non-pressure pass, which visits the same pairs, and read by PCISPH.
    std::vector<float> deltaScale;
    BoundaryForceBuffer bodyForces; // friction, adhesion and pressure reactions on tracked samples
    double time = 0.0;
    SphStepResult last;

private:
    void deriveConstants();
    void resizeWorkArrays(size_t n);
    void sortParticles(std::initializer_list<std::vector<float>*> sortedAlong);
    void buildNeighborLists();
    /// The container walls' fluid neighbours (the fluid lists, reversed).
    void buildWallLists();
    /// nearBoundary_ of the boundary's grid, after it changed.
    void markCellsNearBoundary();

    SphConfig config_;
    BoundaryModel& boundary_;
    SphKernel kernel_;
    KernelTable table_; // the same kernel, tabulated for the inner loops
    float h_ = 0.04f, d0_ = 0.02f, mass_ = 0.008f, deltaUnit_ = 0.0f, protoDenominator_ = 1.0f;
    NonPressureForces forces_;
    VelocityFilter velocityFilter_;
    std::function<void(float)> boundaryMotion_;
    double sourceWork_ = 0.0;
    NeighborGrid grid_;
    PointColumns fluidColumns_, boundaryColumns_; // the sorted positions, for the neighbour search
    // Per boundary grid cell: 1 if a cell of its 3x3x3 block holds boundary samples (else a particle
    // there has no boundary neighbour); with boundaryColumns_, rebuilt when the boundary changed.
    std::vector<uint8_t> nearBoundary_;
    bool boundaryMoved_ = true;
    // sortParticles' arrays in sorted order, swapped in (one per array: they are gathered at once).
    std::vector<Vec3f> scratchVec_[3];
    std::vector<std::vector<float>> scratchFloat_;
    std::vector<uint32_t> scratchId_;
    std::vector<std::vector<float>*> floatsAlong_;
};

} // namespace octo
