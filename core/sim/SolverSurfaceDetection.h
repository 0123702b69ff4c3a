#pragma once
// Free-surface detection after Marrone, Colagrossi, Le Touzé and Graziani, "Fast free-surface
// detection and level-set function definition in SPH solvers", J. Comput. Phys. 229(10), 2010,
// evaluated with the PCISPH solver's own cached fluid neighbour lists and densities, so a frame's
// detection costs one neighbour loop instead of a grid build plus a candidate search.
//
// It computes exactly what SurfaceDetection_Marrone2010::computeLambda computes on the same
// positions and densities: L_i = -sum_j V_j x_ij (x) gradW_ij over *fluid* neighbours within
// h = 4r (walls and bodies do not count, as in the standalone path), V_j = m / rho_j,
// lambda_i = smallest eigenvalue of L_i.
#include <span>

namespace octo {

class PcisphSolver;

struct SolverSurfaceDetection {
    /// lambda_i in the solver's current particle order. The neighbour lists must belong to the
    /// current positions: call solver.refreshNeighborLists() first (a step moves the particles).
    static void computeLambda(const PcisphSolver& solver, std::span<float> lambda);
};

} // namespace octo
