#pragma once
// Closed, outward-oriented triangle meshes of simple solids, centred at the origin.
#include "common/TriangleMesh.h"

namespace octo {

/// Axis-aligned box with the given half extents (12 triangles, 8 vertices).
TriangleMesh makeBoxMesh(const Vec3f& halfExtents);
/// Icosphere: an icosahedron subdivided `subdivisions` times, vertices projected onto the
/// sphere (20·4^s triangles). Its volume is slightly below 4/3 π r³ (inscribed polyhedron).
TriangleMesh makeIcosphereMesh(float radius, int subdivisions = 3);
/// Cylinder along y from -halfHeight to +halfHeight, `segments` around, with capped ends
/// (fan around a centre vertex on each cap).
TriangleMesh makeCylinderMesh(float radius, float halfHeight, int segments = 48);

} // namespace octo
