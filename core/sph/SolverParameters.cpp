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
        params.choice("pressureSolver") == "dfsph" ? PressureSolver::Dfsph : PressureSolver::Pcisph;
    c.kernel = params.choice("kernel") == "wendland" ? KernelKind::WendlandC2 : KernelKind::CubicSpline;
    c.particleRadius = params.getf("particleRadius");
    c.restDensity = params.getf("restDensity");
    c.densityErrorTolerance = params.getf("densityErrorTolerance");
    c.divergenceErrorTolerance = params.getf("divergenceErrorTolerance");
    c.minIterations = params.geti("minIterations");
    c.maxIterations = std::max(params.geti("maxIterations"), c.minIterations);
    c.timeStepMin = params.getf("timeStepMin");
    c.timeStepMax = std::max(params.getf("timeStepMax"), c.timeStepMin);
    c.cflFactor = params.getf("cflFactor");
    c.viscosity = params.getf("viscosity");
    c.velocityFilter = params.getf("velocityFilter");
    c.boundaryFriction = params.getf("boundaryFriction");
    c.surfaceTension = params.getf("surfaceTension");
    c.adhesion = params.getf("adhesion");
    c.wallCohesion = params.getf("wallCohesion");
    c.vorticityConfinement = params.getf("vorticityConfinement");
    c.gravity = Vec3f(params.getf("gravityX"), params.getf("gravityY"), params.getf("gravityZ"));
    return c;
}

} // namespace octo
