#pragma once
// Legacy VTK particle reader (VtkParticleReader.cpp), called by parseParticles.
#include "io/ParticleIo.h"

#include <string>

namespace octo::particle_io {
/// Parses a legacy VTK file already in memory; throws FileFormatError naming path.
ParticleData readVtk(const std::string& path, const std::string& buf);
} // namespace octo::particle_io
