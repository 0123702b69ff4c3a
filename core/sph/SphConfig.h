#pragma once
// What the SPH solver (SphSolver) is configured with and what one of its steps reports; shared by
// the facade, the fluid model, the time-step controller and both pressure solvers.
#include "common/Types.h"
#include "spatial/SphKernel.h"

#include <cstddef>

namespace octo {

/// Defaults are the parameter table's (common/Parameters.cpp; test_solver_parameters checks
/// every field against SphSolver::configFrom(ParameterSet{})).
struct SphConfig {
    /// Which pressure solver a step runs; everything else (lists, forces, bodies, statistics) is shared.
    enum class PressureSolver { Pcisph, Dfsph };

    PressureSolver pressureSolver = PressureSolver::Pcisph;
    // SphKernel.h: the cubic spline, or Wendland C2 without the pairing instability.
    KernelKind kernel = KernelKind::CubicSpline;
    float particleRadius = 0.01f;          // m; d0 = 2r, h = 4r
    float restDensity = 1000.0f;           // kg/m^3
    float densityErrorTolerance = 0.01f;   // max_i (rho_i - rho0) / rho0, both solvers
    float divergenceErrorTolerance = 0.1f; // DFSPH: mean |D rho / Dt| / rho0 in 1/s
    bool dfsphMirrorWalls = true;          // DFSPH: walls mirror the particle (Dfsph_Bender2017.cpp)
    int minIterations = 3;                 // PCISPH only (DFSPH keeps its paper's minima)
    int maxIterations = 50;
    float timeStepMin = 1e-5f, timeStepMax = 5e-3f; // s
    float cflFactor = 0.5f;
    float viscosity = 0.01f;         // Monaghan alpha
    float velocityFilter = 0.8f;     // eps of the bi-Laplacian velocity filter (VelocityFilter.h), 0 = off
    bool velocityFilterRate = false; // eps per 2.5 ms of simulated time instead of per step
    bool velocityFilterLinearExact = false; // L without its first-order error (VelocityFilter.h)
    float boundaryFriction = 0.05f;         // Akinci sigma
    float soundSpeed = 20.0f;               // m/s, numerical c_s scaling the artificial viscosity
    float surfaceTension = 0.0f;            // Akinci 2013 gamma (cohesion + curvature), 0 = off
    float adhesion = 0.0f;                  // Akinci 2013 beta (fluid-boundary adhesion), 0 = off
    float wallCohesion = 0.0f;              // boundary samples' share in the cohesion (0 = Akinci 2013)
    float vorticityConfinement = 0.0f;      // epsilon of VorticityConfinement_Fedkiw2001, 0 = off
    Vec3f gravity = Vec3f(0.0f, -9.81f, 0.0f);
    Aabb domain;      // region of the neighbour grid (particles outside still work)
    Aabb containment; // if not empty: particles leaving it are put back (safety net)
    Aabb escape;      // outer face of the walls: a particle beyond it escaped (counted before the net acts)
};

/// What one step did; times in milliseconds of wall clock.
struct SphStepResult {
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
    // PCISPH and DFSPH, when a first attempt failed its guards: the state's max_i (rho_i - rho0) / rho0
    // (0: not measured) and the updates of DensityProjection_Macklin2013 (then one restart more).
    float startDensityError = 0.0f;
    int projectionIterations = 0;
    double msNeighbors = 0.0, msNonPressure = 0.0, msPressure = 0.0, msTotal = 0.0;
};

} // namespace octo
