#pragma once
// Wavefront OBJ reader for rigid-body shapes: "v x y z" and "f" records (forms i, i/t, i//n,
// i/t/n; negative indices count back from the latest vertex; polygons become triangle fans).
// Other records (vt, vn, g, o, s, usemtl, mtllib, l, comments) are ignored.
// Errors throw octo::FileFormatError naming the file, the line number and the problem.
// The reader does not check that the mesh is closed: rigid/MeshProperties does (validateSolidMesh).
#include "common/TriangleMesh.h"
#include "io/ParticleIo.h" // FileFormatError

#include <cstdint>
#include <istream>
#include <string>

namespace octo {

/// Largest OBJ file readObj accepts (a regular file only).
constexpr uint64_t kMaxObjFileBytes = uint64_t(512) << 20;
/// Bytes of OBJ text each triangle must be paid for by (fan triangulation included): "f 1 2 3\n"
/// takes 8, so a triangle's 12 bytes of memory stay within twice the file's size.
constexpr uint64_t kObjBytesPerTriangle = 6;
/// Reads an OBJ file. Throws FileFormatError (cannot open, empty, bad number, index out of
/// range, face with fewer than 3 vertices, no faces, more triangles than kObjBytesPerTriangle allows).
TriangleMesh readObj(const std::string& path);
/// Same, from a stream; `sourceName` names the source in messages.
TriangleMesh parseObj(std::istream& in, const std::string& sourceName);

} // namespace octo
