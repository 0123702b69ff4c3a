#pragma once
// Settings, statistics and per-frame outputs of the surface reconstruction (docs/ALGORITHMS.md §4-8).
#include "common/TriangleMesh.h"
#include "common/Types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace octo {
class ParameterSet;

/// Which cells get distance values. All four share one lattice (origin and edge L), one phi and
/// one marching-cubes pass, so their meshes agree wherever their cell sets cover the surface.
enum class SurfaceMethod : uint8_t {
    Octree = 0,  ///< Shao et al. 2016: surface leaves of the adaptive octree (the paper's method)
    Uniform = 1, ///< Solenthaler et al. 2007 ("CAVW_2007"): every cell of the fluid's bounding box
    Narrow = 2,  ///< Akinci et al. 2012 ("CGF_2012"): cells within R of a surface particle, no octree
    Sparse = 3,  ///< splashsurf-style: all cells of 8^3-cell blocks touched by any particle's R-box
};
const char* surfaceMethodName(SurfaceMethod m);
/// Throws std::invalid_argument naming the accepted values.
SurfaceMethod parseSurfaceMethod(const std::string& name);

/// The scalar field evaluated at the chosen corners (docs/SURFACE.md).
enum class SurfaceField : uint8_t {
    /// Yu & Turk 2013 anisotropic kernels (smoothed centres, surface particles stretched along the
    /// surface), then volume-preserving mesh smoothing and normals from the field's gradient: the
    /// default, smooth and volume-true surface.
    Anisotropic = 0,
    /// The paper's field: Zhu & Bridson 2005 with Solenthaler 2007's radius correction, plain marching
    /// cubes (Shao et al. 2016's tables and the baselines).
    Distance = 1,
};
const char* surfaceFieldName(SurfaceField f);
/// Throws std::invalid_argument naming the accepted values.
SurfaceField parseSurfaceField(const std::string& name);

struct SurfaceSettings {
    float particleRadius = 0.01f;    ///< r [m]; rest spacing 2r
    float restDensity = 1000.0f;     ///< rho0 [kg/m^3]; m = rho0 (2r)^3
    float lambdaMin = 0.75f;         ///< surface particle when lambda <= lambdaMin (Marrone 2010)
    float leafSize = 0.0f;           ///< L [m]; 0 = automatic 2r/sqrt(3)
    float kernelRadiusFactor = 4.0f; ///< R = factor * r for the distance field (Zhu & Bridson)
    float supportFactor = 4.0f;      ///< h = factor * r for the detection kernel (cubic spline)
    float tLow = 0.4f, tHigh = 3.5f; ///< Solenthaler 2007 f-factor thresholds on EVmax
    /// Enlargement l of the octree's S set, in units of R (the paper: 1). Smaller values keep a
    /// thinner band; the zero level set lies within about r of the outermost particles, so values
    /// down to about (r + sqrt(3) L) / R still cover it: 0.75 at the automatic L = 2r/sqrt(3) and
    /// R = 4r, the default (meshes byte-identical to l = R on 274 frames of four scenes, 78-81 % of
    /// the cubes; docs/BENCHMARKS.md).
    float sEnlargementFactor = 0.75f;
    SurfaceMethod method = SurfaceMethod::Octree;
    SurfaceField field = SurfaceField::Anisotropic;
    // --- Anisotropic field (Yu & Turk 2013; used when field == Anisotropic) ---
    float anisotropyRadiusFactor = 1.5f; ///< covariance / smoothing radius r_c in units of R
    /// Largest / smallest kernel axis (Yu & Turk's k_r; they use 4). 2 here: one-particle sheets stay
    /// about 2r thick (hole-free at the automatic L) and the jittered ball is rounder (SURFACE.md).
    float anisotropyKr = 2.0f;
    float anisotropyKn = 0.5f;    ///< kernel size of sparsely surrounded particles (k_n)
    int anisotropyNeps = 25;      ///< fewer neighbours within r_c: isotropic k_n kernel (N_eps)
    float centreSmoothing = 0.9f; ///< Laplacian smoothing of the kernel centres (lambda)
    /// Surface at f = isoLevel (f ~ 1 inside the fluid): 0.35 puts the jittered pool's and ball's
    /// surfaces where their volume is the particles' (SURFACE.md).
    float isoLevel = 0.35f;
    /// Weighted Laplacian smoothing steps of the mesh (Loeschner et al. 2023), then the volume is
    /// restored; 0 = none. Anisotropic field only.
    int meshSmoothingIterations = 20;
    bool computeMesh = true; ///< false: detection (+ octree) only
    /// false: skip the surface-particle detection. Only the uniform and sparse baselines can run
    /// without it (they do not use surface particles); lambda and surfaceFlag are then empty.
    bool detectSurface = true;
    bool storeLeaves = true; ///< keep every octree leaf with its class (for drawing)
    bool computeNormals = true;
    /// Fills the cheap counts cubesUniform/Narrow/Sparse even when another method is chosen.
    bool countBaselines = true;

    /// Leaf edge actually used.
    float effectiveLeafSize() const;
    /// Non-empty when the settings are usable but risky (e.g. L > 2r/sqrt(3): thin sheets may open).
    std::string warning() const;
    /// Throws std::invalid_argument naming the bad value.
    void validate() const;
};

/// Reads particleRadius, restDensity, lambdaMin, leafSize, kernelRadiusFactor, tLow, tHigh,
/// surfaceMethod (and surfaceSEnlargement, surfaceField, surfaceSmoothing when present) from the shared
/// parameter table.
SurfaceSettings surfaceSettingsFromParameters(const ParameterSet& params);

/// Same numeric values as octo::NodeClass in sim/FrameSnapshot.h (a static_cast converts).
enum class CellClass : uint8_t { Exterior = 0, Interior = 1, Surface = 2 };

struct OctreeLeaf {
    Vec3f min = Vec3f::Zero();
    float edge = 0.0f;
    uint8_t depth = 0;
    CellClass cls = CellClass::Exterior;
};

/// Work and time of one reconstruction (the paper's Tables 2-3).
/// A "cube" is a lattice cell of edge L whose 8 corners got distance values with a method
/// (for the octree: its surface leaves, each at the finest level). corners counts the distinct
/// lattice corners where phi was actually evaluated (each at most once).
struct SurfaceStats {
    uint64_t particles = 0;
    uint64_t surfaceParticles = 0;
    uint64_t cubes = 0;        ///< cells of the chosen method
    uint64_t corners = 0;      ///< phi evaluations of the chosen method
    uint64_t cubesOctree = 0;  ///< surface leaves (0 when not computed)
    uint64_t cubesUniform = 0; ///< all cells of the lattice box
    uint64_t cubesNarrow = 0;  ///< cells within R (box distance) of a surface particle
    uint64_t cubesSparse = 0;  ///< cells of the blocks the sparse grid activates
    uint64_t octreeNodes = 0, octreeLeaves = 0, octreeDepth = 0;
    uint64_t blocks = 0; ///< 8^3-cell blocks holding corners
    uint64_t vertices = 0, triangles = 0;
    float leafSize = 0.0f;
    uint64_t anisotropicParticles = 0; ///< particles given Yu & Turk kernels (anisotropic field)
    double tDetectMs = 0, tOctreeMs = 0, tDistanceMs = 0, tMcMs = 0, tTotalMs = 0;
    /// Yu & Turk's kernels, built beside the cells (tOctreeMs overlaps it; tDistanceMs is then the
    /// field's wall time beyond the cells', so the three stages' times add up to their wall time).
    double tAnisotropyMs = 0;
    double tSmoothMs = 0;   ///< mesh smoothing, normals and velocities (part of tMcMs)
    uint64_t peakBytes = 0; ///< bytes held by the workspace (container capacities) at the end of the frame
};

struct SurfaceResult {
    std::vector<float> lambda;        ///< per particle, caller's order
    std::vector<uint8_t> surfaceFlag; ///< 1 = surface particle, caller's order
    std::vector<OctreeLeaf> leaves;   ///< octree leaves with class (octree method, storeLeaves)
    /// Welded, indexed, outward-oriented. mesh.velocities: the particles' velocity interpolated at
    /// each vertex (docs/SURFACE.md) when the caller passed velocities, empty otherwise.
    TriangleMesh mesh;
    SurfaceStats stats;
};

} // namespace octo
