#pragma once
// Triangle mesh output: Wavefront OBJ (v, vn, f with 1-based indices) and binary little-endian
// PLY (float x y z [nx ny nz] [vx vy vz speed], face list uchar/int, through io/PlyWriter); the
// vertex velocities and their magnitude (speed) only in PLY. Both keep the mesh
// welded (shared vertices) and throw std::runtime_error naming the path when a write fails.
#include "common/TriangleMesh.h"

#include <string>

namespace octo {

/// The one OBJ writer; `comment` (one line, optional) goes into the header.
void writeMeshObj(const std::string& path, const TriangleMesh& mesh, const std::string& comment = "");
void writeMeshPly(const std::string& path, const TriangleMesh& mesh);
/// By extension (.obj or .ply); throws std::runtime_error for other extensions or I/O failures.
void writeMesh(const std::string& path, const TriangleMesh& mesh);

} // namespace octo
