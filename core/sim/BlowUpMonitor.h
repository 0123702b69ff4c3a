#pragma once
// The blow-up checks of a Simulation (Simulation::blowUpMessage): an energy balance that may
// only fall while nothing drives the fluid, and a speed no source can explain.
#include "common/Parameters.h"
#include "common/Types.h"

#include <limits>
#include <string>
#include <utility>

namespace octo {

class SphSolver;
class SimulationBodies;
struct SceneDescription;
struct StepStats;

class BlowUpMonitor {
public:
    /// Reads gravity from `params` and the container from `scene` at every check (both outlive it).
    BlowUpMonitor(const ParameterSet& params, const SceneDescription& scene) : params(params), scene(scene) {}

    /// A new start of the scene: the tolerance from the fluid's mass, |g|, the container's size
    /// and the fastest initial particle; no reference energy yet, no sources seen.
    void reset(const SphSolver& solver, float gravity, float initialSpeed);
    /// The energy changed on purpose (gravity edited, a body added or removed): the next step
    /// takes a new reference.
    void forgetReference() { energyRef = std::numeric_limits<double>::infinity(); }
    /// The stir tool pushes the fluid in the next step: its speed becomes a source.
    void stirred() { stirPending = true; }
    /// True when something may add energy in this step that the balance cannot book: a drag or a
    /// stir. A moving kinematic body's work is booked (RigidCoupling::lastKinematicWork).
    bool driven(const SimulationBodies& bodies) const;
    /// Before a solver step: when a new reference is due (reset, edit, body added), records the
    /// energy the step starts from.
    void beforeStep(const SphSolver& solver, const SimulationBodies& bodies);
    /// After a solver step (bodies integrated): books the step's sources and fills `last`'s
    /// blowUp, energyGrowth, kineticEnergy and maxSpeed. `drive`: driven() before the step.
    void check(const SphSolver& solver, const SimulationBodies& bodies, bool drive, StepStats& last);
    /// The first blow-up since the reset, in one line (empty: none).
    const std::string& message() const { return blowUpMsg; }

private:
    std::pair<double, double> energy(const SphSolver& solver, const SimulationBodies& bodies) const;
    double balancedEnergy(const SphSolver& solver, double ke, double pe) const;
    float speedLimit(float sourceSpeed) const;

    const ParameterSet& params;
    const SceneDescription& scene;
    // energyRef = inf: the next step's start becomes the reference, plus settleAllowance until the
    // energy falls below that (see check()).
    double energyRef = std::numeric_limits<double>::infinity(), energyTol = 0.0, settleAllowance = 0.0;
    bool newReference = false;
    double energyBefore = 0.0;    // the energy a new reference's step started from (beforeStep)
    double sourceWork = 0.0;      // work of the non-potential forces and kinematic bodies since the reset (J)
    float initialMaxSpeed = 0.0f; // fastest fluid particle of the scene's start (speed check)
    float stirSpeed = 0.0f;       // fastest fluid particle right after a stir since the reset (idem)
    float bodySpeed = 0.0f;       // fastest body point since the reset (idem)
    bool stirPending = false;
    std::string blowUpMsg;
};

} // namespace octo
