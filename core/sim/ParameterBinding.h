#pragma once
// From a Simulation's ParameterSet to the configurations of its parts: the parameters a scene
// starts with, the solver's Config, and what an edit of one parameter touches.
#include "common/Parameters.h"
#include "common/Types.h"
#include "sph/SphSolver.h"

#include <span>
#include <string>
#include <vector>

namespace octo {

struct SceneDescription;

/// Defaults, then the scene's radius, gravity and "parameters", then `overrides` (name=value);
/// validated after all of them (minIterations <= maxIterations ...).
ParameterSet parametersForScene(const SceneDescription& scene, const std::vector<std::string>& overrides);

Vec3f gravityOf(const ParameterSet& params);

/// Numerical speed of sound for the artificial viscosity (Monaghan 1994: c = 10 sqrt(g H)), from
/// the initial fluid height above the container floor and the fastest initial particle.
float numericalSoundSpeed(const ParameterSet& params, const Aabb& container, std::span<const Vec3f> positions,
                          float initialMaxSpeed);

/// The solver's configuration: the parameters, the scene's container and the sound speed.
SphSolver::Config solverConfig(const ParameterSet& params, const SceneDescription& scene, float soundSpeed);

/// What an edit of one parameter touches (Simulation::setParameter).
struct ParameterEffect {
    bool surface = false; ///< a surface setting: the surface is rebuilt with it
    bool reset = false;   ///< takes effect when the scene is rebuilt (resolution, layers ...)
    bool solver = false;  ///< the solver and the bodies take it from the next step
};
ParameterEffect effectOf(const std::string& name);

} // namespace octo
