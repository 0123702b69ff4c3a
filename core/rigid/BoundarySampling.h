#pragma once
// Adaptive boundary sampling of a triangle mesh after Akinci, Akinci, Ihmsen, Solenthaler,
// Teschner, "Versatile Surface Tension and Adhesion for SPH Fluids" / "Coupling elastic solids
// with SPH fluids" (2013), as docs/ALGORITHMS.md §3.2 describes: the triangle vertices; each
// edge at spacing <= r0; the interior by scan lines parallel to the triangle's shortest edge,
// stepped by r0 along its inward normal within the triangle's plane, each line sampled at
// spacing <= r0.
// Beyond the paper (so that the guarantees below hold on any mesh, including thin triangles and
// dense scanned meshes whose edges are much shorter than r0):
//  - merge/thin: candidates are accepted in priority order (vertices, edges, scan lines) only
//    when no accepted sample lies closer than minSpacingFactor·r0 (this also merges the
//    duplicates on shared vertices and edges);
//  - fill: every triangle is then probed on a fine barycentric grid; a probe farther than
//    fillThreshold·r0 from all samples becomes a sample.
// Result (defaults): no two samples closer than 0.6·r0, every surface point within 0.75·r0 of a sample.
#include "common/TriangleMesh.h"

#include <vector>

namespace octo {

struct BoundarySamplingOptions {
    float latticeFactor = 1.0f; ///< edge/scan-line step = this · r0 (<= r0)
    /// Reject candidates closer than this · r0 to a sample. 0.6 rather than the required 0.5:
    /// on meshes whose triangles are a few r0 wide the edge samples alone would otherwise give
    /// 3-4 samples per r0² (measured on an icosphere); 0.6 gives 1.2-1.6 with coverage intact.
    float minSpacingFactor = 0.6f;
    /// Probes farther than this · r0 from all samples are added. Any point lies within ~0.06 r0 of
    /// a probe (0.1 r0 grid), so coverage stays below 0.68 + 0.06 < 0.75 r0.
    float fillThreshold = 0.68f;
    float probeSpacingFactor = 0.1f; ///< fill probes: barycentric grid step, · r0
};

struct BoundarySamplingStats {
    size_t vertexSamples = 0, edgeSamples = 0, interiorSamples = 0, fillSamples = 0;
    size_t candidates = 0; ///< before merging/thinning
};

/// Samples the surface of `mesh` at spacing r0 (> 0). Throws std::invalid_argument for r0 <= 0
/// or a sample count above maxSamples (r0 too small for the mesh).
std::vector<Vec3f> sampleBoundary(const TriangleMesh& mesh, float r0,
                                  const BoundarySamplingOptions& options = {},
                                  BoundarySamplingStats* stats = nullptr, size_t maxSamples = 20'000'000);

/// Quality measures used by the tests: min distance between two samples, and the largest
/// distance from a probe point of any triangle (barycentric grid at probeSpacing) to its
/// nearest sample.
struct SamplingQuality {
    float minPairDistance = 0.0f;
    float maxCoverageDistance = 0.0f;
};
SamplingQuality measureSamplingQuality(const TriangleMesh& mesh, const std::vector<Vec3f>& samples, float r0,
                                       float probeSpacing);

} // namespace octo
