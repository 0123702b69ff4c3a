#pragma once
// Validation and exact mass properties of closed triangle meshes.
//
// Mass properties follow D. Eberly, "Polyhedral Mass Properties (Revisited)" (2003), a
// simplification of B. Mirtich, "Fast and Accurate Computation of Polyhedral Mass Properties"
// (J. Graphics Tools 1(2), 1996): volume integrals of 1, x, y, z, x², y², z², xy, yz, zx over
// the solid, by the divergence theorem as sums over the triangles. Computed in double.
#include "common/TriangleMesh.h"
#include "common/Types.h"

#include <stdexcept>
#include <string>

namespace octo {

/// A mesh that cannot be a rigid body's shape (open, non-manifold, inconsistent, zero volume).
class InvalidMeshError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MassProperties {
    double volume = 0.0;                ///< m³ (signed: negative for an inward-oriented mesh)
    double mass = 0.0;                  ///< kg = density · volume
    Vec3d centerOfMass = Vec3d::Zero(); ///< m, in the mesh's coordinates
    Mat3d inertia = Mat3d::Zero();      ///< kg m², about the centre of mass, mesh axes
};

/// Exact mass properties of the solid bounded by a closed, consistently oriented mesh.
MassProperties computeMassProperties(const TriangleMesh& mesh, double density = 1.0);
/// Signed volume only (positive when the triangles are counter-clockwise seen from outside).
double signedVolume(const TriangleMesh& mesh);

/// Checks that `mesh` bounds a solid and orients it outward, in place:
/// indices in range, no degenerate (repeated-index) triangles, every undirected edge shared by
/// exactly two triangles that traverse it in opposite directions (closed, consistently
/// oriented), |volume| > minVolume. Flips every triangle when the volume is negative. Drops
/// per-vertex normals if their count does not match. `name` prefixes the messages.
/// Throws InvalidMeshError saying what is wrong and where (first bad edge / triangle).
void validateSolidMesh(TriangleMesh& mesh, const std::string& name = "mesh", double minVolume = 1e-12);

/// Bounding box of the vertices.
Aabb meshBounds(const TriangleMesh& mesh);
/// Total surface area.
double surfaceArea(const TriangleMesh& mesh);

} // namespace octo
