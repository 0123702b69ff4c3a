// The solver's side of the parameter table (common/Parameters.cpp): the one place that turns the
// table's values into SphSolver::Config. The scene-dependent fields (domain, containment,
// escape, sound speed) are the simulation's to set.
#include "common/Parameters.h"
#include "sph/SphSolver.h"

#include <algorithm>

namespace octo {

SphSolver::Config SphSolver::configFrom(const ParameterSet& params) {
    Config c;
    c.pressureSolver =
        params.choice(Param::pressureSolver) == "dfsph" ? PressureSolver::Dfsph : PressureSolver::Pcisph;
    c.kernel = params.choice(Param::kernel) == "wendland" ? KernelKind::WendlandC2 : KernelKind::CubicSpline;
    c.particleRadius = params.getf(Param::particleRadius);
    c.restDensity = params.getf(Param::restDensity);
    c.densityErrorTolerance = params.getf(Param::densityErrorTolerance);
    c.divergenceErrorTolerance = params.getf(Param::divergenceErrorTolerance);
    c.dfsphMirrorWalls = params.getb(Param::dfsphMirrorWalls);
    c.minIterations = params.geti(Param::minIterations);
    c.maxIterations = std::max(params.geti(Param::maxIterations), c.minIterations);
    c.timeStepMin = params.getf(Param::timeStepMin);
    c.timeStepMax = std::max(params.getf(Param::timeStepMax), c.timeStepMin);
    c.cflFactor = params.getf(Param::cflFactor);
    c.viscosity = params.getf(Param::viscosity);
    c.velocityFilter = params.getf(Param::velocityFilter);
    c.velocityFilterRate = params.getb(Param::velocityFilterRate);
    c.velocityFilterLinearExact = params.getb(Param::velocityFilterLinearExact);
    c.boundaryFriction = params.getf(Param::boundaryFriction);
    c.surfaceTension = params.getf(Param::surfaceTension);
    c.adhesion = params.getf(Param::adhesion);
    c.wallCohesion = params.getf(Param::wallCohesion);
    c.vorticityConfinement = params.getf(Param::vorticityConfinement);
    c.gravity =
        Vec3f(params.getf(Param::gravityX), params.getf(Param::gravityY), params.getf(Param::gravityZ));
    return c;
}

} // namespace octo
