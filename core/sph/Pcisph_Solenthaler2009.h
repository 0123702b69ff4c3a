#pragma once
// Predictive-corrective incompressible SPH after Solenthaler & Pajarola 2009, "Predictive-
// Corrective Incompressible SPH", ACM TOG 28(3) 40 (SIGGRAPH 2009), as specified in
// docs/ALGORITHMS.md §2, with boundary particles after Akinci et al. 2012 (BoundaryModel).
//
// Per step, on the lists FluidModel built: the non-pressure forces (NonPressureForces), then
// prediction -> density -> pressure -> pressure force over the cached lists until
// max_i (rho*_i - rho0)/rho0 <= eta (at least minIterations, at most maxIterations), then
// symplectic Euler (and, optional, the velocity filter on the committed velocities:
// VelocityFilter). delta (eq. 8 of the paper) comes from a prototype particle with a full
// neighbourhood on the rest lattice; it scales with 1/dt^2 and is recomputed for every new dt.
//
// Beyond the paper, for robustness (each explained where it is implemented):
//  - the boundary pushes with p_i + p_k, not Akinci's p_i alone: on a body p_k is the fluid's
//    pressure mirrored and continued hydrostatically into it, and the body receives the same term
//    (boundaryPressureOverRho2); a wall (BoundaryModel::setWall) gets the pressure extrapolated
//    from the fluid around each sample (Adami et al. 2012; extrapolateWallPressure);
//  - delta_i = min(delta_prototype, delta from i's own neighbours incl. boundary): one-sided
//    neighbourhoods in wall corners would otherwise be over-corrected and oscillate;
//  - a compression the step started with (not the step's own: it does not shrink with dt) that
//    makes its first attempt fail the guards below is projected away by positions and the attempt
//    redone (DensityProjection_Macklin2013);
//  - a step whose prediction moves particles more than d0 (cached lists would be invalid),
//    turns non-finite or exceeds 50 % density error is redone from the same state at dt / 4;
//    a step that misses eta within maxIterations is redone at dt / 2 (up to 3 times) before its
//    velocities are committed;
//  - besides CFL, dt <= cfl sqrt(d0 / |a|) with a the non-pressure acceleration only (the
//    pressure acceleration scales with 1/dt^2 in PCISPH; TimeStepController);
//  - dt also follows the iteration count (Ihmsen et al. 2010), since p restarts from 0 each step,
//    by at most 5 % per step (a restart or a missed eta halves it; TimeStepController);
//  - optional containment box as a last-resort safety net (SphStepResult::contained counts uses).
#include "spatial/Lanes.h"
#include "sph/DensityProjection_Macklin2013.h"
#include "sph/PressureSolverBase.h"

#include <vector>

namespace octo {

class Pcisph_Solenthaler2009 final : public PressureSolverBase {
public:
    using PressureSolverBase::PressureSolverBase;

    const SphStepResult& step(float maxDt) override;
    void resize(size_t) override {}   // its arrays are sized by the passes
    void clearWarmStart() override {} // p restarts from 0 every step
    int minimumIterations() const override;

private:
    /// How one attempt's iterations ended.
    struct Attempt {
        bool restart = false, missed = false;
    };
    /// The prediction-correction iterations of one attempt at dt; cur, it and err carry the
    /// buffer in use, the iteration count and the latest error.
    Attempt iterate(float dt, int& cur, int& it, float& err);
    /// DensityProjection_Macklin2013 on the step's start, with the lists rebuilt where its
    /// shift bound stops it (projectWithRebuilds); records it in res, true if it moved any.
    bool projectStartCompression(SphStepResult& res);
    /// Commits the last prediction (symplectic Euler) and the step's statistics.
    void commit(float dt, int cur, SphStepResult& res);
    float predictDensityAndPressure(float dt, int cur);
    void computePressureForce(float dt, int cur);
    /// Pressure at each wall sample near fluid, extrapolated from the fluid (Adami et al. 2012).
    void extrapolateWallPressure(float dt, int cur);
    void accumulateBoundaryPressureReaction(float dt, int cur);
    /// The iteration's predicted positions packed as (x, y, z, w) for the fluid pairs' lanes,
    /// w = 0 (packPositions, before the density pass) or p / rho^2 (packPressures, after it).
    void packPositions(int cur);
    /// The boundary samples' predicted places as (x_k + dt v_k, Psi_k), once per attempt.
    void packBoundary(float dt);
    void packPressures();

    DensityProjection_Macklin2013 projection_; // of the compression a step starts with
    std::vector<float> pressureOverRho2_;      // p / rho^2 of the latest iteration
    std::vector<Float4> packed_;               // (x, y, z, 0 or p / rho^2), see packPositions
    std::vector<Float4> packedBoundary_;       // (x_k + dt v_k, Psi_k), see packBoundary
    std::vector<float> wallPressure_;          // read only at the wall samples near fluid
    float maxSpeedCandidate_ = 0.0f;           // of the latest prediction
    bool finiteCandidate_ = true;
};

} // namespace octo
