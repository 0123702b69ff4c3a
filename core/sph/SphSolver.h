#pragma once
// The SPH fluid solver as the simulation sees it: a facade over the parts that have seams in the
// physics (after SPlisHSPlasH's shape, without its singletons):
//  - FluidModel: particles, sort, neighbour lists, boundary samples, the non-pressure forces
//    (NonPressureForces, each force in its own file), containment and statistics;
//  - a pressure solver behind PressureSolverBase: PCISPH (Pcisph_Solenthaler2009) or DFSPH
//    (Dfsph_Bender2017), chosen by Config::pressureSolver; one virtual call per step;
//  - TimeStepController: CFL and force bounds, the iteration-aware scale, restarts, clamping.
#include "common/Parameters.h"
#include "common/Types.h"
#include "sph/Dfsph_Bender2017.h"
#include "sph/FluidModel.h"
#include "sph/Pcisph_Solenthaler2009.h"
#include "sph/SphConfig.h"
#include "sph/TimeStepController.h"

#include <functional>
#include <limits>
#include <span>
#include <vector>

namespace octo {

class SphSolver {
public:
    using Config = SphConfig;
    using PressureSolver = SphConfig::PressureSolver;
    using StepResult = SphStepResult;

    /// The table's values as a Config (SolverParameters.cpp); the scene-dependent fields (domain,
    /// containment, escape, soundSpeed) keep their defaults.
    static Config configFrom(const ParameterSet& params);

    SphSolver(const Config& config, BoundaryModel& boundary);

    /// Changes parameters that need no rebuild (tolerances, dt bounds, viscosity, gravity...).
    /// particleRadius / restDensity changes re-derive mass and kernel (the caller resamples).
    void setConfig(const Config& config);
    const Config& config() const { return model_.config(); }

    void setParticles(std::vector<Vec3f> positions, std::vector<Vec3f> velocities = {});
    /// Removes the particles with drop[i] != 0 (drop in the current particle order, e.g. fluid
    /// inside a body added mid-run); time, dt control and the other particles are kept.
    void removeParticles(std::span<const uint8_t> drop);
    /// One step; dt is the CFL step, lowered to maxDt if that is smaller (never below timeStepMin).
    const StepResult& step(float maxDt = std::numeric_limits<float>::infinity()) {
        return active_->step(maxDt);
    }
    const StepResult& lastStep() const { return model_.last; }

    const FluidState& state() const { return model_.state; }
    FluidState& state() { return model_.state; }
    size_t particleCount() const { return model_.state.size(); }
    BoundaryModel& boundary() { return model_.boundary(); }

    /// Called with a restarted attempt's dt before it runs, so that moving boundary objects can
    /// take the velocities that carry them over that shorter step (the solver predicts boundary
    /// samples at x + dt v). Without it a kinematic body's mean velocity over the planned step
    /// pushed the fluid farther than the body then moved.
    void setBoundaryMotion(std::function<void(float dt)> motion) {
        model_.setBoundaryMotion(std::move(motion));
    }

    /// The fewest pressure iterations a step runs: PCISPH's minIterations; DFSPH's density solve
    /// keeps its paper's 2 (Bender & Koschier 2017, algorithm 3).
    int minimumIterations() const { return active_->minimumIterations(); }

    float mass() const { return model_.mass(); }
    float supportRadius() const { return model_.supportRadius(); }
    const SphKernel& kernel() const { return model_.kernel(); }
    /// delta(dt) = deltaUnit / dt^2 (Solenthaler & Pajarola eq. 8).
    float delta(float dt) const { return model_.deltaUnit() / (dt * dt); }
    /// dt the next step will use (CFL and non-pressure acceleration bound, clamped to [dtMin, dtMax]).
    float nextTimeStep() const { return timeStep_.next(); }
    const TimeStepController& timeStep() const { return timeStep_; }
    double time() const { return model_.time; }
    /// Sets the clock back to 0, keeping the particles, the time step and the warm starts (the
    /// start of a scene after StartSettling).
    void restartClock() { model_.time = 0.0; }
    /// Max particle speed of the committed state (m/s).
    float maxSpeed() const { return timeStep_.maxSpeed(); }
    /// Potential energy (J) of the cohesion, the wall's cohesion and the adhesion (Akinci 2013's
    /// attractions are central pair forces: U = -gamma m_i m_j int_r^h C, -beta m_i Psi_k int_r^h A),
    /// at the positions the last step started from (0 with both off). The curvature term has no
    /// potential and is not counted.
    double attractionEnergy() const { return model_.attractionEnergy(); }
    /// Work (J) that the forces without a potential, the surface tension's curvature term, its
    /// density correction K_ij - 1 and vorticity confinement, did on the fluid in the last committed
    /// step: their share of its kinetic energy's change (0 with tension and confinement off). With
    /// attractionEnergy() it closes the energy balance that the blow-up check reads.
    double sourceWork() const { return model_.sourceWork(); }

private:
    PressureSolverBase& solverFor(PressureSolver kind);

    FluidModel model_;
    TimeStepController timeStep_;
    Pcisph_Solenthaler2009 pcisph_;
    Dfsph_Bender2017 dfsph_;
    PressureSolverBase* active_ = nullptr;
};

} // namespace octo
