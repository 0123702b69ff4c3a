#pragma once
// Helpers the particle readers share (ParticleIo.cpp: PLY; VtkParticleReader.cpp: legacy VTK):
// reading a file whole, checked sizes, the scalar types and their decoding, where the read
// properties go, and the final position / density checks. Internal to core/io.
#include "common/Types.h"
#include "io/FileRead.h"
#include "io/ParticleIo.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace octo::particle_io {
[[noreturn]] inline void fail(const std::string& path, const std::string& what) {
    throw FileFormatError(path + ": " + what);
}

// Particle files are held in memory once; the limit only keeps a typo'd path to a disk image
// from being read. The real bound is that every count is checked against the bytes that remain.
inline constexpr uint64_t kMaxParticleFileBytes = uint64_t(64) << 30;

inline std::string readAll(const std::string& path) {
    std::string data = readRegularFile(path, kMaxParticleFileBytes, "particle file");
    if (data.empty())
        fail(path, "empty file");
    return data;
}

/// a * b, or fail naming `what` when the product does not fit in size_t.
inline size_t checkedProduct(const std::string& path, size_t a, size_t b, const char* what) {
    if (b != 0 && a > std::numeric_limits<size_t>::max() / b) {
        std::ostringstream s;
        s << what << ": size " << a << " x " << b << " is too large";
        fail(path, s.str());
    }
    return a * b;
}

// ---------------------------------------------------------------- scalar types
enum class Scalar { I8, U8, I16, U16, I32, U32, F32, F64, Invalid };

inline Scalar scalarOf(const std::string& t) {
    if (t == "char" || t == "int8")
        return Scalar::I8;
    if (t == "uchar" || t == "uint8")
        return Scalar::U8;
    if (t == "short" || t == "int16")
        return Scalar::I16;
    if (t == "ushort" || t == "uint16")
        return Scalar::U16;
    if (t == "int" || t == "int32")
        return Scalar::I32;
    if (t == "uint" || t == "uint32")
        return Scalar::U32;
    if (t == "float" || t == "float32")
        return Scalar::F32;
    if (t == "double" || t == "float64")
        return Scalar::F64;
    return Scalar::Invalid;
}
inline size_t sizeOf(Scalar s) {
    switch (s) {
    case Scalar::I8:
    case Scalar::U8:
        return 1;
    case Scalar::I16:
    case Scalar::U16:
        return 2;
    case Scalar::I32:
    case Scalar::U32:
    case Scalar::F32:
        return 4;
    case Scalar::F64:
        return 8;
    default:
        return 0;
    }
}
inline bool floatLike(Scalar s) {
    return s == Scalar::F32 || s == Scalar::F64;
}

inline double decode(const unsigned char* p, Scalar s, bool bigEndian) {
    unsigned char b[8];
    const size_t n = sizeOf(s);
    std::memcpy(b, p, n);
    if (bigEndian != (std::endian::native == std::endian::big))
        std::reverse(b, b + n);
    switch (s) {
    case Scalar::I8:
        return double(int8_t(b[0]));
    case Scalar::U8:
        return double(b[0]);
    case Scalar::I16: {
        int16_t v;
        std::memcpy(&v, b, 2);
        return v;
    }
    case Scalar::U16: {
        uint16_t v;
        std::memcpy(&v, b, 2);
        return v;
    }
    case Scalar::I32: {
        int32_t v;
        std::memcpy(&v, b, 4);
        return v;
    }
    case Scalar::U32: {
        uint32_t v;
        std::memcpy(&v, b, 4);
        return v;
    }
    case Scalar::F32: {
        float v;
        std::memcpy(&v, b, 4);
        return v;
    }
    case Scalar::F64: {
        double v;
        std::memcpy(&v, b, 8);
        return v;
    }
    default:
        return 0.0;
    }
}

// Particle properties by name -> where they go.
struct Sink {
    ParticleData& data;
    std::vector<std::string> scalarNames;
    void begin(const std::vector<std::string>& names, const std::vector<bool>& keep, size_t n) {
        data.positions.assign(n, Vec3f::Zero());
        const bool vel = std::count(names.begin(), names.end(), "vx") &&
                         std::count(names.begin(), names.end(), "vy") &&
                         std::count(names.begin(), names.end(), "vz");
        if (vel)
            data.velocities.assign(n, Vec3f::Zero());
        for (size_t k = 0; k < names.size(); ++k)
            if (keep[k])
                data.scalars[names[k]].assign(n, 0.0f);
    }
};

inline void checkPositions(const std::string& path, const ParticleData& d) {
    for (size_t i = 0; i < d.positions.size(); ++i)
        if (!d.positions[i].allFinite()) {
            std::ostringstream s;
            s << "particle " << i << " has a non-finite coordinate (" << d.positions[i].x() << ", "
              << d.positions[i].y() << ", " << d.positions[i].z() << ")";
            fail(path, s.str());
        }
    // Densities give each particle its volume m / rho: 0, negative or NaN made every particle a
    // "surface" particle without a word.
    if (const auto it = d.scalars.find("density"); it != d.scalars.end())
        for (size_t i = 0; i < it->second.size(); ++i)
            if (!(it->second[i] > 0.0f) || !std::isfinite(it->second[i])) {
                std::ostringstream s;
                s << "particle " << i << ": field 'density' = " << it->second[i]
                  << " (must be finite and > 0 kg/m^3)";
                fail(path, s.str());
            }
}

} // namespace octo::particle_io
