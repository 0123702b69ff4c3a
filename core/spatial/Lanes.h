#pragma once
// Four floats (or ints) side by side, as the compiler's vector extension (GCC and Clang): the
// solver's pair loops compute the terms of four neighbour pairs at once with the scalar code's
// operations in the scalar code's order, so each lane holds bit for bit the scalar result (no
// fused multiply-add: the default build targets SSE2), and then sum them pair by pair.
#include <cstdint>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace octo {

using Float4 = float __attribute__((vector_size(16)));
using Int4 = int32_t __attribute__((vector_size(16)));

inline Float4 broadcast4(float v) {
    return Float4{v, v, v, v};
}

/// x + (y + z): Eigen's order for the sum of three terms (squaredNorm, dot of Vec3f).
inline Float4 sum3(Float4 x, Float4 y, Float4 z) {
    return x + (y + z);
}

/// a where mask is set, else b (mask from a lane comparison).
inline Float4 select4(Int4 mask, Float4 a, Float4 b) {
    return Float4(((Int4)a & mask) | ((Int4)b & ~mask));
}

/// Bit k set where lane k of mask (from a lane comparison) is set.
inline unsigned laneBits4(Int4 mask) {
#if defined(__SSE__)
    return unsigned(_mm_movemask_ps(__m128(mask)));
#else
    return unsigned(mask[0] & 1) | unsigned(mask[1] & 2) | unsigned(mask[2] & 4) | unsigned(mask[3] & 8);
#endif
}

} // namespace octo
