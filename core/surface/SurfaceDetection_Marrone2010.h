#pragma once
// Free-surface particle detection after Marrone, Colagrossi, Le Touzé and Graziani, "Fast
// free-surface detection and level-set function definition in SPH solvers", J. Comput. Phys.
// 229(10), 2010. L_i = -sum_j x_ij (x) gradW_ij V_j (the inverse of the renormalisation matrix);
// its smallest eigenvalue lambda_i is ~1 inside, ~0.5 at a flat free surface and 0 for an isolated
// particle. Shao et al. 2016 flag lambda_i <= lambdaMin = 0.75.
#include "common/Types.h"
#include "sph/CubicSplineKernel.h"
#include "sph/NeighborGrid.h"

#include <span>

namespace octo {

class SurfaceDetection_Marrone2010 {
public:
    /// rho_i = m sum_j W_ij (own contribution included), for inputs without solver densities.
    /// xs: positions in the grid's sorted order; the grid's cells must be >= the kernel support.
    static void computeDensities(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                 const CubicSplineKernel& kernel, float mass, std::span<float> rho);
    /// lambda_i = smallest eigenvalue of L_i, with V_j = m / rho_j.
    static void computeLambda(const NeighborGrid& grid, std::span<const Vec3f> xs, std::span<const float> rho,
                              const CubicSplineKernel& kernel, float mass, std::span<float> lambda);
    /// Smallest eigenvalue of a symmetric 3x3 matrix (closed form, Eigen computeDirect in double).
    static float smallestEigenvalue(const Mat3f& m);
};

} // namespace octo
