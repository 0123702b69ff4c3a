#pragma once
// What a pressure solver does with the shared fluid model (SPlisHSPlasH's TimeStep, without its
// singletons): one step from the committed state to the next, pressure solve, integration and
// commit included. The implementations are Pcisph_Solenthaler2009 and Dfsph_Bender2017; the facade
// SphSolver makes one virtual call per step, the per-particle and per-pair passes are the
// implementations' own, non-virtual code.
#include "sph/SphConfig.h"

#include <cstddef>

namespace octo {

class FluidModel;
class TimeStepController;

class PressureSolverBase {
public:
    PressureSolverBase(FluidModel& model, TimeStepController& timeStep)
        : model_(model), timeStep_(timeStep) {}
    virtual ~PressureSolverBase() = default;
    PressureSolverBase(const PressureSolverBase&) = delete;
    PressureSolverBase& operator=(const PressureSolverBase&) = delete;

    /// One step of at most maxDt (the controller's dt otherwise); the model's last step afterwards.
    virtual const SphStepResult& step(float maxDt) = 0;
    /// The solver's own per-particle state for n particles (after setParticles / removeParticles).
    virtual void resize(size_t n) = 0;
    /// Forgets the state carried from step to step (a switch from the other solver made it stale).
    virtual void clearWarmStart() = 0;
    /// The fewest pressure iterations a step runs.
    virtual int minimumIterations() const = 0;

protected:
    FluidModel& model_;
    TimeStepController& timeStep_;
};

} // namespace octo
