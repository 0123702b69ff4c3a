// libFuzzer target for the particle readers (PLY and legacy VTK share one entry point; the
// two targets built from this file differ only in their seed corpus). Any exception other than
// the documented FileFormatError (std::bad_alloc, std::length_error ...), a sanitizer report, a
// hang or an allocation above -malloc_limit_mb is a finding.
#include "io/ParticleIo.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        const octo::ParticleData d = octo::parseParticles(bytes, "fuzz");
        // The data must be consistent: per-particle arrays are empty or one per particle.
        if (!d.velocities.empty() && d.velocities.size() != d.positions.size())
            __builtin_trap();
        for (const auto& [name, values] : d.scalars)
            if (values.size() != d.positions.size())
                __builtin_trap();
    } catch (const octo::FileFormatError&) {
    }
    return 0;
}
