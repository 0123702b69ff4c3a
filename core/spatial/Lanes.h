#pragma once
// Four floats (or ints) side by side, as the compiler's vector extension (GCC and Clang): the
// solver's pair loops compute the terms of four neighbour pairs at once with the scalar code's
// operations in the scalar code's order, so each lane holds bit for bit the scalar result (no
// fused multiply-add: the default build targets SSE2), and then sum them pair by pair.
#include <cstdint>
#include <cstring>
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

/// The 4x4 transpose in place: lane l of row k becomes lane k of row l. Gathers four particles'
/// (x, y, z, w) into the x, y, z and w of four pairs, and spreads four pairs' terms back into one
/// (x, y, z, w) per pair, whose vector sums are four scalar sums side by side.
inline void transpose4(Float4& r0, Float4& r1, Float4& r2, Float4& r3) {
    const Float4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5),
                 t1 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
    const Float4 t2 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7),
                 t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
    r0 = __builtin_shufflevector(t0, t1, 0, 1, 4, 5);
    r1 = __builtin_shufflevector(t0, t1, 2, 3, 6, 7);
    r2 = __builtin_shufflevector(t2, t3, 0, 1, 4, 5);
    r3 = __builtin_shufflevector(t2, t3, 2, 3, 6, 7);
}

/// Lane l of at and next: p[i[l]] and p[i[l] + 1] (the two samples a table lookup interpolates),
/// one 8-byte load per lane instead of two 4-byte ones.
inline void gatherAdjacent4(const float* p, Int4 i, Float4& at, Float4& next) {
    using Float2 = float __attribute__((vector_size(8)));
    Float2 q[4];
    for (int l = 0; l < 4; ++l)
        std::memcpy(&q[l], p + i[l], sizeof(Float2));
    const Float4 t0 = __builtin_shufflevector(q[0], q[1], 0, 2, 1, 3); // at0 at1 next0 next1
    const Float4 t1 = __builtin_shufflevector(q[2], q[3], 0, 2, 1, 3);
    at = __builtin_shufflevector(t0, t1, 0, 1, 4, 5);
    next = __builtin_shufflevector(t0, t1, 2, 3, 6, 7);
}

/// Two tables f and g stored interleaved, p = (f0, g0, f1, g1, ...): lane l of r[0..3] is f[i[l]],
/// g[i[l]], f[i[l] + 1], g[i[l] + 1], one 16-byte load per lane for both tables' two samples.
inline void gatherAdjacentPairs4(const float* p, Int4 i, Float4 (&r)[4]) {
    for (int l = 0; l < 4; ++l)
        std::memcpy(&r[l], p + 2 * size_t(uint32_t(i[l])), sizeof(Float4));
    transpose4(r[0], r[1], r[2], r[3]);
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
