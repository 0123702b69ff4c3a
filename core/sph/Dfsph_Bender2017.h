#pragma once
// Divergence-free SPH after Bender & Koschier 2015/2017 (Dfsph_Bender2017.cpp): the pressure
// solver of SphSolver when SphConfig::pressureSolver is Dfsph. The neighbour lists, non-pressure
// forces, boundary samples, time-step bounds and statistics are FluidModel's and
// TimeStepController's, the same PCISPH uses; only the pressure solve differs.
#include "common/Types.h"
#include "spatial/Lanes.h"
#include "sph/DensityProjection_Macklin2013.h"
#include "sph/PressureSolverBase.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace octo {

class Dfsph_Bender2017 final : public PressureSolverBase {
public:
    /// The density solve's fewest sweeps (Bender & Koschier 2017, algorithm 3).
    static constexpr int kDensityMinIterations = 2;

    using PressureSolverBase::PressureSolverBase;

    const SphStepResult& step(float maxDt) override;
    void resize(size_t n) override;
    void clearWarmStart() override;
    int minimumIterations() const override { return kDensityMinIterations; }

private:
    // m grad W_ij and Psi_k grad W_ik (doubled with dfsphMirrorWalls) per listed pair of one
    // block, at the step's positions (every sweep reads them instead of recomputing the kernel).
    struct BlockGradients {
        std::vector<Vec3f> fluid, boundary;
    };
    void computeDensityAndFactor();
    /// Both solves from the step's start at dt: the divergence-free velocities, the non-pressure
    /// forces, the constant-density solve. Returns the fastest predicted speed squared.
    float attempt(float dt, SphStepResult& res, int& it, int& itDiv, float& meanErr, float& maxErr);
    /// One Jacobi sweep of either solve; returns (mean, max) of the compressive source over rho0.
    std::pair<float, float> sweep(float dt, bool divergence);
    void applyPressureIncrement(float dt);
    /// velocity4_ and boundaryVelocity4_ from the current velocities (before a solve's first source).
    void keepVelocityLanes();
    /// Half the previous step's pressures of one solve as its first increment, where the
    /// source compresses (Bender & Koschier 2017 section 4.3, SPlisHSPlasH's form).
    void warmStart(float dt, bool divergence);
    /// The compressive source of particle i (of block b) at the current velocities: max(0, D rho_i
    /// / Dt) for the divergence solve (0 in a deficient neighbourhood), max(0, rho_i + dt D rho_i /
    /// Dt - rho0) for the density solve.
    float source(uint32_t i, size_t b, float dt, bool divergence) const;
    /// source() of particles i and i + 1 (both of block b), their sums side by side so the core
    /// overlaps the two chains of additions; each in source()'s order (bit for bit its results).
    std::pair<float, float> sourcePair(uint32_t i, size_t b, float dt, bool divergence) const;
    /// The source from the rate D rho_i / Dt (source()).
    float sourceFromRate(uint32_t i, float rate, float dt, bool divergence) const;
    void accumulateBodyForces();
    /// Back to the step's start (velocities, warm starts), then DensityProjection_Macklin2013 on
    /// its positions, the lists rebuilt where its shift bound stops it (projectWithRebuilds), and
    /// the density and factor at the result; recorded in res, true if it moved any.
    bool projectStartCompression(SphStepResult& res);
    /// Keeps the velocities and warm starts a restarted attempt starts again from.
    void keepStart();
    void restoreStart();
    /// x(t + dt) = x + dt v*, the pressures for display, the statistics.
    void commit(float dt, float maxV2, SphStepResult& res);

    std::vector<BlockGradients> gradients_;
    // The factor 1 / (|sum m grad W + sum Psi grad W|^2 + sum |m grad W|^2) (boundary doubled), the pressures
    // over rho^2 of the divergence and density solves (kept across steps for their warm starts, sorted with
    // the particles), and this sweep's increment.
    std::vector<float> factor_, divergenceStiffness_, densityStiffness_, stiffnessIncrement_;
    // The sweeps' copy of the fluid's predicted and the boundary's velocities, x, y, z in lanes
    // (16 bytes each: a neighbour's velocity is one aligned load); kept by keepVelocityLanes().
    std::vector<Float4> velocity4_, boundaryVelocity4_;
    std::vector<Vec3f> boundarySupport_; // the mirrored boundary's hydrostatic push, per unit time
    std::vector<Vec3f> startVelocity_;   // a restarted step starts again from these
    std::vector<float> startDivergence_, startDensity_;
    float solvedDt_ = 0.0f;                    // the dt the kept pressures were solved at (0: none kept)
    DensityProjection_Macklin2013 projection_; // of the compression a step starts with
};

} // namespace octo
