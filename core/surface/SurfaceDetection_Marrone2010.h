#pragma once
// Free-surface particle detection after Marrone, Colagrossi, Le Touzé and Graziani, "Fast
// free-surface detection and level-set function definition in SPH solvers", J. Comput. Phys.
// 229(10), 2010. L_i = -sum_j x_ij (x) gradW_ij V_j (the inverse of the renormalisation matrix);
// its smallest eigenvalue lambda_i is ~1 inside, ~0.5 at a flat free surface and 0 for an isolated
// particle. Shao et al. 2016 flag lambda_i <= lambdaMin = 0.75.
//
// Standalone path (particle files, no solver data): two passes over the grid's occupied cells,
// densities then L. Each cell gathers, once per pass and in structure-of-arrays form, those of
// its 27-cell candidates that lie within h of the box of its particles (~64 of ~216 on a lattice;
// the others are beyond h of all of them); the kernel sums of each particle then run over all of
// them in 8-float SIMD lanes (the kernel vanishes beyond h), with no per-particle distance
// test or compaction. Baseline x86-64 and AVX2 (chosen at run time) do the same arithmetic, so
// lambda does not depend on the CPU. lambda_min comes from the closed-form (trigonometric) root
// of the characteristic cubic in double precision.
#include "common/Types.h"
#include "spatial/CubicSplineKernel.h"
#include "spatial/NeighborGrid.h"

#include <array>
#include <memory>
#include <span>

namespace octo {

class SurfaceDetection_Marrone2010 {
public:
    /// Per-thread scratch (tbb::enumerable_thread_specific), owned by the caller and reused between
    /// calls: no allocation in steady state and nothing left behind on worker threads.
    class Workspace {
    public:
        Workspace();
        ~Workspace();
        Workspace(const Workspace&) = delete;
        Workspace& operator=(const Workspace&) = delete;
        struct Impl;
        Impl& impl() { return *impl_; }
        size_t bytes() const;
        /// The last pass's sorted positions as arrays x, y, z (particles + 8 floats each; the
        /// padding is readable), valid until the next pass.
        std::array<const float*, 3> sortedPositions() const;

    private:
        std::unique_ptr<Impl> impl_;
    };

    /// rho_i = m sum_j W_ij (own contribution included), for inputs without solver densities.
    /// xs: positions in the grid's sorted order; the grid's cells must be >= the kernel support.
    static void computeDensities(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                 const CubicSplineKernel& kernel, float mass, std::span<float> rho);
    static void computeDensities(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                 const CubicSplineKernel& kernel, float mass, std::span<float> rho,
                                 Workspace& workspace);
    /// lambda_i = smallest eigenvalue of L_i, with V_j = m / rho_j.
    static void computeLambda(const NeighborGrid& grid, std::span<const Vec3f> xs, std::span<const float> rho,
                              const CubicSplineKernel& kernel, float mass, std::span<float> lambda);
    static void computeLambda(const NeighborGrid& grid, std::span<const Vec3f> xs, std::span<const float> rho,
                              const CubicSplineKernel& kernel, float mass, std::span<float> lambda,
                              Workspace& workspace);
    /// Both passes for inputs without solver densities (rho out, lambda out), sharing one
    /// structure-of-arrays copy of the positions.
    static void computeDensitiesAndLambda(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                          const CubicSplineKernel& kernel, float mass, std::span<float> rho,
                                          std::span<float> lambda, Workspace& workspace);
};

} // namespace octo
