#include "sph/SphSolver.h"

namespace octo {

SphSolver::SphSolver(const Config& config, BoundaryModel& boundary)
    : model_(boundary), pcisph_(model_, timeStep_), dfsph_(model_, timeStep_) {
    model_.setConfig(config);
    timeStep_.setBounds({config.cflFactor, model_.spacing(), config.timeStepMin, config.timeStepMax});
    active_ = &solverFor(config.pressureSolver);
}

PressureSolverBase& SphSolver::solverFor(PressureSolver kind) {
    return kind == PressureSolver::Dfsph ? static_cast<PressureSolverBase&>(dfsph_) : pcisph_;
}

void SphSolver::setConfig(const Config& config) {
    const PressureSolver before = model_.config().pressureSolver;
    model_.setConfig(config);              // checks the values first
    if (config.pressureSolver != before) { // the other solver's warm start is stale
        pcisph_.clearWarmStart();
        dfsph_.clearWarmStart();
    }
    timeStep_.setBounds({config.cflFactor, model_.spacing(), config.timeStepMin, config.timeStepMax});
    active_ = &solverFor(config.pressureSolver);
}

void SphSolver::setParticles(std::vector<Vec3f> positions, std::vector<Vec3f> velocities) {
    model_.setParticles(std::move(positions), std::move(velocities));
    pcisph_.resize(particleCount());
    dfsph_.resize(particleCount());
    float maxSpeed = 0.0f;
    for (const Vec3f& v : model_.state.velocities)
        maxSpeed = std::max(maxSpeed, v.norm());
    timeStep_.start(maxSpeed, config().gravity.norm());
}

void SphSolver::removeParticles(std::span<const uint8_t> drop) {
    if (!model_.removeParticles(drop))
        return;
    pcisph_.resize(particleCount());
    dfsph_.resize(particleCount());
}

} // namespace octo
