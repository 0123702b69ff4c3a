#pragma once
// Houdini's classic binary geometry (BGEO, version 5) as partio writes it: the particle files of
// SPlisHSPlasH (Bender et al.) and Houdini, usually gzip-compressed (recognised by the gzip magic,
// whatever the extension). Points only: the position, a 3-component float/vector attribute named
// v, vel, velocity or velocities as velocities, and every 1-component float attribute as a scalar
// (e.g. density); int, string and other attributes are skipped. Bounds (docs/INPUT.md): the
// decompressed size is limited to 256x the compressed size plus 1 MiB, and the declared point and
// attribute counts are checked against the bytes that remain before anything is allocated.
#include "io/ParticleIo.h"

#include <string>

namespace octo {

/// True when bytes start like a BGEO file: the "Bgeo" magic, or the gzip magic (a gzip-compressed
/// file is then decompressed and must hold BGEO).
bool looksLikeBgeo(const std::string& bytes);
/// Parses BGEO bytes (path names the file in FileFormatError messages).
ParticleData parseBgeo(const std::string& bytes, const std::string& path);

} // namespace octo
