#pragma once
// Surface reconstruction after every step (Shao, Liu & Wang 2016): surface-particle detection
// (Marrone 2010), the adaptive octree (Octree_Shao2016) or a baseline cell set (GridBaselines),
// the distance field at the chosen corners (Zhu & Bridson 2005 / Solenthaler 2007) and welded
// marching cubes (Lorensen & Cline 1987). All buffers live in this object and keep their capacity
// between frames: keep one reconstructor per particle stream.
//
//   SurfaceReconstructor rec;
//   rec.reconstruct(positions, densities /* may be empty */, settings);
//   const SurfaceResult& r = rec.result(); // lambda, surfaceFlag (caller's order), leaves, mesh, stats
#include "common/Types.h"
#include "spatial/NeighborGrid.h"
#include "surface/AnisotropicField_YuTurk2013.h"
#include "surface/BlockCornerField.h"
#include "surface/BlockParticles.h"
#include "surface/DistanceField_Solenthaler2007.h"
#include "surface/GridBaselines.h"
#include "surface/MeshSmoothing.h"
#include "surface/Octree_Shao2016.h"
#include "surface/SurfaceDetection_Marrone2010.h"
#include "surface/SurfaceSettings.h"

#include <tbb/enumerable_thread_specific.h>

#include <chrono>
#include <span>
#include <utility>
#include <vector>

namespace octo {

class SurfaceReconstructor {
public:
    /// positions: fluid particles (finite); densities: solver densities in the same order, or
    /// empty to compute them with the cubic spline kernel (h = supportFactor r, m = rho0 (2r)^3).
    /// Throws std::invalid_argument for NaN positions, a density array of the wrong size or bad
    /// settings; std::length_error when a baseline's grid would be too large.
    void reconstruct(std::span<const Vec3f> positions, std::span<const float> densities,
                     const SurfaceSettings& settings);
    /// Same, with the particles' velocities (caller's order, empty or one per particle):
    /// result().mesh.velocities gets them interpolated at the vertices.
    void reconstruct(std::span<const Vec3f> positions, std::span<const float> densities,
                     const SurfaceSettings& settings, std::span<const Vec3f> velocities);
    const SurfaceResult& result() const { return result_; }
    SurfaceResult& result() { return result_; }

    /// The lattice used by the last reconstruction (shared by all methods).
    const Lattice& lattice() const { return lattice_; }
    /// The distance field's phi (Solenthaler 2007) at an arbitrary point, with the particles of the
    /// last reconstruction.
    float distanceAt(const Vec3f& x) const;
    /// The active field's phi (negative inside) at an arbitrary point, last reconstruction.
    float phiAt(const Vec3f& x) const;

private:
    using Clock = std::chrono::steady_clock;
    void detect(std::span<const float> densities, Clock::time_point t0);
    void evaluateCorners();
    void evaluateAnisotropicCorners();
    void finishMesh();
    void vertexFieldPass(bool weights, bool normals, bool velocities);
    void buildCells(SurfaceMethod method, std::vector<CellBlock>& blocks, bool forCount);
    // reconstruct()'s steps: clears the result and stats for n particles; sets the total time since
    // t0 and the peak workspace; the lattice (origin, extent) and its octree depth; the chosen method's
    // cells and their corners; the kernels (Yu & Turk 2013) of the sorted particles; the other
    // methods' cell counts (countBaselines).
    void resetResult(size_t n);
    void stampTotals(Clock::time_point t0);
    void setUpLattice(const Vec3f& origin, const Vec3f& ext);
    void buildMethodCells();
    void computeKernels(const AnisotropySettings& a);
    void countBaselineCells();
    uint64_t workspaceBytes() const;

    SurfaceSettings settings_;
    std::span<const Vec3f> givenVelocities_; // caller's velocities during reconstruct(..., velocities)
    NeighborGrid grid_;
    std::vector<Vec3f> xs_;           // sorted positions
    std::vector<Vec3f> vs_;           // sorted velocities (when the caller passed them)
    std::vector<float> rho_, lambda_; // sorted order
    std::vector<Vec3f> surfaceXs_;    // surface particles, sorted order
    Lattice lattice_;
    int depth_ = 0;
    Octree_Shao2016 octree_;
    DenseBlockScratch dense_;
    std::vector<CellBlock> blocks_, countBlocks_;
    BlockCornerField field_;
    SurfaceResult result_;
    AnisotropicKernels kernels_;
    std::vector<uint8_t> anisotropic_; // sorted order: surface particles get Yu & Turk kernels
    MeshSmoother smoother_;
    std::vector<float> vertexWeight_;
    std::vector<std::pair<uint64_t, uint32_t>> vertexKeys_,
        vertexKeysTmp_;                             // vertexFieldPass: (group, vertex), sorted
    std::vector<uint32_t> groupStart_, superStart_; // vertexFieldPass: groups, 2x2x2 super-groups
    // Per-thread scratch, owned here (not thread_local: TBB workers outlive the object and
    // LeakSanitizer reported the buffers they kept).
    SurfaceDetection_Marrone2010::Workspace detection_;
    struct CornerScratch {
        BlockParticles block;
        DistanceField_Solenthaler2007::Candidates candidates;
        // Anisotropic corners: a block's kernels (vertexFieldPass: a super-group's), a group's.
        AnisotropicCandidates blockKernels, groupKernels;
        std::vector<uint32_t> slab, row, group; // block kernels near a slab / row / group
        std::vector<float> rx, ry, rz;          // the row's kernel centres
        std::vector<float> sx, sy, sz;          // the slab's kernel centres
        std::vector<uint32_t> superIds;         // vertexFieldPass: the super-group kernels' particles
        std::vector<float> vx, vy, vz;          // vertexFieldPass: the group kernels' velocities
        CovarianceScratch covariance;           // AnisotropicKernels::compute
    };
    tbb::enumerable_thread_specific<CornerScratch> cornerScratch_;

    // evaluateAnisotropicCorners' and vertexFieldPass' parts.
    bool gatherBlockKernels(const Vec3i& g0, const BlockMask& corners, AnisotropicCandidates& blk) const;
    struct VertexFieldJob;
    void groupVertices(float invG, const Vec3i& dims, const Vec3i& superDims);
    void vertexFieldSuperGroup(const VertexFieldJob& job, size_t sup, CornerScratch& scratch);
    void vertexFieldGroup(const VertexFieldJob& job, uint32_t grp, const Vec3f& centre,
                          CornerScratch& scratch);
};

} // namespace octo
