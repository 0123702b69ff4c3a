#pragma once
// A resting start in equilibrium: the fluid a scene samples on a lattice at uniform density is not
// in equilibrium under gravity (no hydrostatic compression, the simple cubic lattice under
// pressure, the free surface beside the walls). Left alone it rearranges in the first second and
// keeps moving at 0.07-0.13 m/s without the velocity filter (docs/SCENES.md, "Kernels").
//
// Before t = 0 the blocks that stand on the container's floor at rest run the solver for a short
// time with their motion damped (dynamic relaxation: kinetic energy taken out, gravity ramped in
// over the first half, after Adami, Hu & Adams 2012, "A generalized wall boundary condition for
// SPH", §4.1, whose hydrostatic test ramps gravity over a damping time; a damped relaxation of the
// start distribution as in Colagrossi et al. 2012, "Particle packing algorithm for SPH schemes").
// Each block stays in its box (open against gravity), so a dam-break column cannot collapse while
// it settles; every other particle (moving blocks, spheres, meshes, blocks in the air) is held
// where the scene put it. The clock then starts at 0 from the settled positions, at rest.
#include "common/Types.h"

#include <cstddef>
#include <vector>

namespace octo {

class SphSolver;

struct SettleReport {
    int steps = 0;
    size_t settled = 0;       // particles that moved (the others were held)
    double wallSeconds = 0.0; // wall time of the settling
    float finalMaxSpeed = 0.0f;
};

/// Runs the settling for `seconds` of simulated time. `box[i]` is the block of the i-th particle
/// given to setParticles (its id), or an empty box to hold it. Afterwards the solver holds the
/// settled positions at rest, its clock at 0; the time step it reached carries on (restarting it
/// at its first, short step met the settled state's ~eta density errors with a 1/dt^2 pressure:
/// 0.34 m/s in the first frame).
SettleReport settleStart(SphSolver& solver, const std::vector<Aabb>& box, float seconds);

} // namespace octo
