#pragma once
// Volume-preserving smoothing of a welded, closed marching-cubes mesh (docs/SURFACE.md): the
// weighted Laplacian smoothing of splashsurf (Loeschner, Boettcher, Jeske & Bender, "Weighted
// Laplacian smoothing for surface reconstruction of particle-based fluids", VMV 2023),
//   x_v <- x_v + lambda w_v (mean of the one-ring - x_v),
// with a per-vertex feature weight w_v from the particle neighbourhood: vertices near sparse
// particles (drops, filaments, sheet rims) move little or not at all, so those keep their volume.
// Laplacian smoothing shrinks what it smooths (a ball by ~1 % here); a last step offsets the
// vertices along their normals, uniformly (times w_v), so that the enclosed volume equals the
// unsmoothed mesh's (taken to first order, exact to ~1e-4 relative).
#include "common/TriangleMesh.h"

#include <cstdint>
#include <span>
#include <vector>

namespace octo {

class MeshSmoother {
public:
    /// weights: per vertex in [0, 1] (0 = fixed). steps: Laplacian steps. Parallel (TBB).
    void smooth(TriangleMesh& mesh, std::span<const float> weights, int steps, float lambda = kLambda);
    /// smooth() in two parts: prepare() reads only the mesh as marching cubes left it (one-rings,
    /// small pieces, volume), so it may run beside the pass that computes the weights; then
    /// smoothPrepared() with the same mesh. Same result as smooth().
    void prepare(const TriangleMesh& mesh);
    void smoothPrepared(TriangleMesh& mesh, std::span<const float> weights, int steps,
                        float lambda = kLambda);
    /// Signed volume enclosed by a closed, outward-oriented mesh (divergence theorem).
    static double volume(const TriangleMesh& mesh);
    size_t bytes() const;

    static constexpr float kLambda = 0.5f;
    static constexpr size_t kMinPieceVertices = 200; ///< smaller closed pieces are left as they are

private:
    void buildAdjacency(const TriangleMesh& mesh);
    std::vector<uint32_t> start_, adj_, fill_;
    std::vector<Vec3f> tmp_, grad_;
    std::vector<float> weights_;
    std::vector<uint8_t> component_, smallPiece_;
    double volume0_ = 0.0;
    std::vector<uint32_t> stack_;
};

} // namespace octo
