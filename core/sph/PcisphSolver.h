#pragma once
// Predictive-corrective incompressible SPH after Solenthaler & Pajarola 2009, "Predictive-
// Corrective Incompressible SPH", ACM TOG 28(3) 40 (SIGGRAPH 2009), as specified in
// docs/ALGORITHMS.md §2, with boundary particles after Akinci et al. 2012 (BoundaryModel).
//
// Per step: sort the particles by Z-order cell, build cached neighbour lists (fluid-fluid and
// fluid-boundary) once, compute gravity + artificial viscosity (Monaghan 1992) + boundary
// friction (Akinci 2012 eq. 11) + optional surface tension and adhesion (SurfaceTension_Akinci2013)
// + optional vorticity confinement (VorticityConfinement_Fedkiw2001), then iterate prediction -> density ->
// pressure -> pressure force with the cached lists until max_i (rho*_i - rho0)/rho0 <= eta (at least
// minIterations, at most maxIterations), then integrate with symplectic Euler (and, optional, filter the
// committed velocities: VelocityFilter). delta (eq. 8 of the paper)
// comes from a prototype particle with a full neighbourhood on the rest lattice; it scales with 1/dt^2 and is
// recomputed for every new dt.
//
// Beyond the paper, for robustness (each explained where it is implemented):
//  - the boundary pushes with p_i + p_k, not Akinci's p_i alone: on a body p_k is the fluid's
//    pressure mirrored and continued hydrostatically into it, and the body receives the same term
//    (boundaryPressureOverRho2); a wall (BoundaryModel::setWall) gets the pressure extrapolated
//    from the fluid around each sample (Adami et al. 2012; extrapolateWallPressure);
//  - delta_i = min(delta_prototype, delta from i's own neighbours incl. boundary): one-sided
//    neighbourhoods in wall corners would otherwise be over-corrected and oscillate;
//  - a step whose prediction moves particles more than d0 (cached lists would be invalid),
//    turns non-finite or exceeds 50 % density error is redone from the same state at dt / 4;
//    a step that misses eta within maxIterations is redone at dt / 2 (up to 3 times) before its
//    velocities are committed;
//  - besides CFL, dt <= cfl sqrt(d0 / |a|) with a the non-pressure acceleration only (the
//    pressure acceleration scales with 1/dt^2 in PCISPH; bounding dt by it ran away, see .cpp);
//  - dt also follows the iteration count (Ihmsen et al. 2010), since p restarts from 0 each step,
//    by at most 5 % per step (a restart or a missed eta halves it);
//  - optional containment box as a last-resort safety net (StepResult::contained counts uses).
// Kernel values in the loops come from KernelTable (tabulated over |x|^2: no sqrt per pair).
#include "common/Parameters.h"
#include "common/Types.h"
#include "spatial/KernelTable.h"
#include "spatial/NeighborGrid.h"
#include "spatial/SphKernel.h"
#include "sph/BoundaryForceBuffer.h"
#include "sph/BoundaryModel.h"
#include "sph/FluidState.h"
#include "sph/SurfaceTension_Akinci2013.h"
#include "sph/VelocityFilter.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <span>
#include <vector>

namespace octo {

class PcisphSolver {
public:
    /// Which pressure solver a step runs; everything else (lists, forces, bodies, statistics) is shared.
    enum class PressureSolver { Pcisph, Dfsph };

    /// Defaults are the parameter table's (common/Parameters.cpp; test_solver_parameters checks
    /// every field against configFrom(ParameterSet{})).
    struct Config {
        PressureSolver pressureSolver = PressureSolver::Pcisph;
        // SphKernel.h: the cubic spline, or Wendland C2 without the pairing instability.
        KernelKind kernel = KernelKind::CubicSpline;
        float particleRadius = 0.01f;          // m; d0 = 2r, h = 4r
        float restDensity = 1000.0f;           // kg/m^3
        float densityErrorTolerance = 0.01f;   // max_i (rho_i - rho0) / rho0, both solvers
        float divergenceErrorTolerance = 0.1f; // DFSPH: mean |D rho / Dt| / rho0 in 1/s (0.1 = 10 %/s)
        int minIterations = 3;                 // PCISPH only (DFSPH keeps its paper's minima)
        int maxIterations = 50;
        float timeStepMin = 1e-5f, timeStepMax = 5e-3f; // s
        float cflFactor = 0.4f;
        float viscosity = 0.01f;        // Monaghan alpha
        float velocityFilter = 0.8f;    // eps of the bi-Laplacian velocity filter (VelocityFilter.h), 0 = off
        float boundaryFriction = 0.05f; // Akinci sigma
        float soundSpeed = 20.0f;       // m/s, numerical c_s scaling the artificial viscosity
        float surfaceTension = 0.0f;    // Akinci 2013 gamma (cohesion + curvature), 0 = off
        float adhesion = 0.0f;          // Akinci 2013 beta (fluid-boundary adhesion), 0 = off
        float wallCohesion = 0.0f;      // boundary samples' share in the cohesion (0 = Akinci 2013)
        float vorticityConfinement = 0.0f; // epsilon of VorticityConfinement_Fedkiw2001, 0 = off
        Vec3f gravity = Vec3f(0.0f, -9.81f, 0.0f);
        Aabb domain;      // region of the neighbour grid (particles outside still work)
        Aabb containment; // if not empty: particles leaving it are put back (safety net)
        Aabb escape; // outer face of the walls: a particle beyond it escaped (counted before the net acts)
    };

    /// What one step did; times in milliseconds of wall clock.
    struct StepResult {
        float dt = 0.0f;
        int iterations = 0;
        float maxDensityError = 0.0f;  // fraction, compression only, of the last iteration
        float meanDensityError = 0.0f; // fraction, mean over the particles of max(rho* - rho0, 0) / rho0
        int divergenceIterations = 0;  // DFSPH: iterations of the divergence-free solve
        bool converged = true;
        bool finite = true;   // false: the step produced NaN/Inf and was not committed
        int restarts = 0;     // times the step was redone with a smaller dt
        size_t contained = 0; // particles put back into the containment box
        size_t escaped = 0;   // of those, particles that were beyond Config::escape (through the walls)
        double msNeighbors = 0.0, msNonPressure = 0.0, msPressure = 0.0, msTotal = 0.0;
    };

    /// The table's values as a Config (SolverParameters.cpp); the scene-dependent fields (domain,
    /// containment, escape, soundSpeed) keep their defaults.
    static Config configFrom(const ParameterSet& params);

    PcisphSolver(const Config& config, BoundaryModel& boundary);

    /// Changes parameters that need no rebuild (tolerances, dt bounds, viscosity, gravity...).
    /// particleRadius / restDensity changes re-derive mass and kernel (the caller resamples).
    void setConfig(const Config& config);
    const Config& config() const { return config_; }

    void setParticles(std::vector<Vec3f> positions, std::vector<Vec3f> velocities = {});
    /// Removes the particles with drop[i] != 0 (drop in the current particle order, e.g. fluid
    /// inside a body added mid-run); time, dt control and the other particles are kept.
    void removeParticles(std::span<const uint8_t> drop);
    /// One step; dt is the CFL step, lowered to maxDt if that is smaller (never below timeStepMin).
    const StepResult& step(float maxDt = std::numeric_limits<float>::infinity());
    const StepResult& lastStep() const { return last_; }

    const FluidState& state() const { return state_; }
    FluidState& state() { return state_; }
    size_t particleCount() const { return state_.size(); }
    BoundaryModel& boundary() { return boundary_; }

    /// Called with a restarted attempt's dt before it runs, so that moving boundary objects can
    /// take the velocities that carry them over that shorter step (the solver predicts boundary
    /// samples at x + dt v). Without it a kinematic body's mean velocity over the planned step
    /// pushed the fluid farther than the body then moved.
    void setBoundaryMotion(std::function<void(float dt)> motion) { boundaryMotion_ = std::move(motion); }

    /// The fewest pressure iterations a step runs: PCISPH's minIterations; DFSPH's density solve
    /// keeps its paper's 2 (Bender & Koschier 2017, algorithm 3).
    int minimumIterations() const {
        return config_.pressureSolver == PressureSolver::Dfsph ? kDfsphDensityMinIterations
                                                               : config_.minIterations;
    }
    static constexpr int kDfsphDensityMinIterations = 2;

    float mass() const { return mass_; }
    float supportRadius() const { return h_; }
    const SphKernel& kernel() const { return kernel_; }
    /// delta(dt) = deltaUnit / dt^2 (Solenthaler & Pajarola eq. 8).
    float delta(float dt) const { return deltaUnit_ / (dt * dt); }
    /// dt the next step will use (CFL and non-pressure acceleration bound, clamped to [dtMin, dtMax]).
    float nextTimeStep() const;
    double time() const { return time_; }
    /// Max particle speed of the committed state (m/s).
    float maxSpeed() const { return maxSpeed_; }
    /// Potential energy (J) of the cohesion, the wall's cohesion and the adhesion (Akinci 2013's
    /// attractions are central pair forces: U = -gamma m_i m_j int_r^h C, -beta m_i Psi_k int_r^h A),
    /// at the positions the last step started from (0 with both off). The curvature term has no
    /// potential and is not counted.
    double attractionEnergy() const { return attractionEnergy_; }
    /// Work (J) that the forces without a potential, the surface tension's curvature term, its
    /// density correction K_ij - 1 and vorticity confinement, did on the fluid in the last committed
    /// step: their share of its kinetic energy's change (0 with tension and confinement off). With
    /// attractionEnergy() it closes the energy balance that the blow-up check reads.
    double sourceWork() const { return sourceWork_; }

    /// Sorts the particles and rebuilds the cached neighbour lists for the current positions
    /// (the state does not change otherwise), so surface detection can use them at the end of a
    /// frame (sim/SolverSurfaceDetection) instead of building its own grid and density pass. The
    /// next step reuses these lists (unless the boundary moved): detection adds no list build.
    void refreshNeighborLists();
    /// Particle i's cached fluid neighbours (j != i, |x_ij| < h) from the latest list build.
    std::span<const uint32_t> fluidNeighbors(uint32_t i) const {
        return {blocks_[i / kBlock].fluid.data() + fluidBegin_[i], fluidCount_[i]};
    }

private:
    struct NeighborBlock {
        // The lists; their sizes are capacities (kept across steps), the pairs in use are the first
        // fluidPairs / boundaryPairs.
        std::vector<uint32_t> fluid, boundary;
        uint32_t fluidPairs = 0, boundaryPairs = 0;
        // DFSPH: m grad W_ij and Psi_k grad W_ik per listed pair, at the step's positions (every
        // sweep reads them instead of recomputing the kernel; Dfsph_Bender2017.cpp).
        std::vector<Vec3f> gradFluid, gradBoundary;
    };
    void deriveConstants();
    /// Sizes the per-particle work arrays for n particles (setParticles, removeParticles).
    void resizeWorkArrays(size_t n);
    void sortParticles();
    void buildNeighborLists();
    /// The container walls' fluid neighbours (the fluid lists, reversed), for wallPressure_.
    void buildWallLists();
    /// Pressure at each wall sample near fluid, extrapolated from the fluid (Adami et al. 2012).
    void extrapolateWallPressure(float dt, int cur);
    /// Boundary update, sort and neighbour lists at the start of a step; false with no particles.
    bool prepareStep(StepResult& res);
    const StepResult& stepPcisph(float maxDt);
    void computeNonPressure(float dt);
    // --- DFSPH (Dfsph_Bender2017.cpp) ---
    const StepResult& stepDfsph(float maxDt);
    void computeDensityAndFactor();
    /// One Jacobi sweep of either DFSPH solve; returns (mean, max) of the compressive source over rho0.
    std::pair<float, float> dfsphSweep(float dt, bool divergence);
    void applyPressureIncrement(float dt);
    void warmStartDivergence(float dt);
    /// The compressive source of particle i at the current velocities: max(0, D rho_i / Dt) for the
    /// divergence solve (0 in a deficient neighbourhood), max(0, rho_i + dt D rho_i / Dt - rho0) for
    /// the density solve.
    float dfsphSource(uint32_t i, const NeighborBlock& blk, float dt, bool divergence) const;
    void accumulateDfsphBodyForces();
    float predictDensityAndPressure(float dt, int cur);
    void computePressureForce(float dt, int cur);
    double sourceWorkOfStep(float dt) const;
    void accumulateBoundaryPressureReaction(int cur);
    /// Puts leaked particles back; returns (contained, escaped) counted before the net acted.
    std::pair<size_t, size_t> containParticles();
    /// f(block, begin, end) over the blocks of kBlock particles, in parallel (one thread per block).
    template <class F> void forBlocks(F&& f) const {
        const size_t n = state_.size();
        const size_t nBlocks = (n + kBlock - 1) / kBlock;
        tbb::parallel_for(tbb::blocked_range<size_t>(0, nBlocks, 1),
                          [&](const tbb::blocked_range<size_t>& r) {
                              for (size_t b = r.begin(); b < r.end(); ++b)
                                  f(b, uint32_t(b * kBlock), uint32_t(std::min(n, (b + 1) * kBlock)));
                          });
    }

    Config config_;
    BoundaryModel& boundary_;
    SphKernel kernel_;
    KernelTable table_; // the same kernel, tabulated for the inner loops
    float h_ = 0.04f, d0_ = 0.02f, mass_ = 0.008f, deltaUnit_ = 0.0f, protoDenominator_ = 1.0f;
    double time_ = 0.0;

    FluidState state_;
    std::vector<Vec3f> predicted_[2], predictedVelocity_, accelNonPressure_, accelPressure_;
    std::vector<float> predictedDensity_, pressureOverRho2_;
    std::vector<float> deltaScale_; // min(1, delta_i / delta_prototype), see computeNonPressure
    // DFSPH: the factor 1 / (|sum m grad W|^2 + sum |m grad W|^2), the pressures over rho^2 of the
    // divergence solve (kept across steps for its warm start, sorted with the particles) and of the
    // density solve, and this sweep's increment.
    std::vector<float> dfsphFactor_, divergenceStiffness_, densityStiffness_, stiffnessIncrement_;
    std::vector<Vec3f> startVelocity_; // a restarted DFSPH step starts again from these
    std::vector<float> startDivergence_;
    SurfaceTension_Akinci2013 tension_;
    VelocityFilter velocityFilter_;
    std::function<void(float)> boundaryMotion_;
    BoundaryForceBuffer bodyForces_; // friction, adhesion and pressure reactions on tracked samples
    // What the pair terms of surface tension and vorticity confinement read from the neighbours,
    // the colour-field normal n_j and |omega_j|, comes from the previous step's non-pressure pass
    // (which computes them for free alongside its other sums; "Prev" is read, "Next" written,
    // then swapped; the Prev arrays follow the particle sort). This saves a whole neighbour pass
    // per step at a lag of one dt. Sized in setParticles; valid flags: filled by the last step.
    std::vector<Vec3f> normalsPrev_, normalsNext_;
    std::vector<float> omegaNormPrev_, omegaNormNext_, volume_; // volume_: V_j = m / rho_j
    bool normalsValid_ = false, omegaValid_ = false;
    NeighborGrid grid_;
    std::vector<Vec3f> scratchVec_;
    std::vector<float> scratchFloat_;
    std::vector<uint32_t> scratchId_;

    // Cached neighbour lists, CSR per block of particles: particle i's fluid neighbours are
    // blocks_[i / kBlock].fluid[fluidBegin_[i] .. fluidBegin_[i] + fluidCount_[i]).
    static constexpr uint32_t kBlock = 256;
    std::vector<NeighborBlock> blocks_;
    std::vector<uint32_t> fluidBegin_, fluidCount_, boundaryBegin_, boundaryCount_;
    // Wall samples (BoundaryModel::setWall: the container's walls) that have fluid neighbours,
    // their fluid neighbours in CSR form (wallFluid_[wallBegin_[k] .. wallBegin_[k + 1]) for sorted
    // boundary index k, ascending i) and their extrapolated pressure.
    std::vector<uint32_t> wallSamples_, wallBegin_, wallFluid_, wallCursor_;
    std::vector<float> wallPressure_;

    float maxSpeed_ = 0.0f, maxAccel_ = 0.0f; // maxAccel_: see step() for which accelerations
    float maxAccelNonPressure_ = 0.0f;
    double attractionEnergy_ = 0.0;   // see attractionEnergy()
    std::vector<double> blockEnergy_; // its per-block sums (no atomics, a fixed summation order)
    std::vector<Vec3f> accelSource_;  // the step's accelerations without a potential (sourceWork)
    bool sourcesActive_ = false;
    double sourceWork_ = 0.0;        // see sourceWork()
    float maxAccelTotal_ = 0.0f;     // pressure included: the bound used with two-way coupled bodies
    float maxSpeedCandidate_ = 0.0f; // of the latest prediction
    bool finiteCandidate_ = true;
    bool listsCurrent_ = false; // refreshNeighborLists() ran since the last step (reused by it)
    float dtScale_ = 1.0f;      // < 1 after restarts / missed tolerance, recovers by 5 % per cheap step
    StepResult last_;
};

} // namespace octo
