#pragma once
// Particle files: binary/ASCII PLY and legacy VTK readers; binary PLY writer.
// Readers throw octo::FileFormatError with a message naming the file and the problem.
#include "common/Types.h"
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace octo {

class FileFormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ParticleData {
    std::vector<Vec3f> positions;
    std::vector<Vec3f> velocities;                     ///< empty or one per particle
    std::map<std::string, std::vector<float>> scalars; ///< e.g. "density", "pressure"
};

/// Reads .ply (ascii / binary_little_endian / binary_big_endian) or legacy .vtk (POINTS).
/// Memory: the file is held once; every count it declares is checked against the bytes that
/// remain before anything is allocated for it, so a read never holds more than ~13x the file's
/// size (the worst case: 1-byte binary VTK values widened to double; ~3x for float files).
/// Only regular files are read (not /dev/zero or a FIFO).
ParticleData readParticles(const std::string& path);
/// The same from bytes in memory (`path` names the source in messages; the fuzz targets use it).
ParticleData parseParticles(const std::string& bytes, const std::string& path);
/// Writes binary little-endian PLY: x y z [vx vy vz] [one float property per scalar].
/// Throws std::runtime_error naming the path when the file cannot be written.
void writeParticlesPly(const std::string& path, const ParticleData& data);

} // namespace octo
