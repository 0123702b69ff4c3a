#include "surface/DistanceField_Solenthaler2007.h"

#include <cstring>

namespace octo {

namespace {
// Eight float lanes (GCC/Clang vector extension): one AVX register, or two SSE registers on the
// baseline x86-64 target. Both targets run the same lane arithmetic in the same order (no FMA),
// so the result does not depend on the CPU.
using F8 = float __attribute__((vector_size(32)));
using I8 = int32_t __attribute__((vector_size(32)));
static_assert(DistanceField_Solenthaler2007::kLanes == 8);

// By reference / out-parameter: passing F8 by value would change the ABI between the two targets.
inline void load8(F8& v, const float* p) {
    std::memcpy(&v, p, sizeof v);
}
using F4 = float __attribute__((vector_size(16)));
// Pairwise: the two halves, then within the half; 3 dependent adds instead of 7 (the 13 sums'
// reductions were ~9 % of the octree path's CPU time with a lane-by-lane loop).
inline float total(const F8& v) {
    const F4 h = __builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7);
    const F4 q = h + __builtin_shufflevector(h, h, 2, 3, 0, 1);
    return q[0] + q[1];
}

struct Accumulated {
    float sw, sx, sy, sz, gx, gy, gz, cxx, cxy, cxz, cyy, cyz, czz;
};

[[gnu::always_inline]] inline void accumulate(const float* px, const float* py, const float* pz, size_t m,
                                              float ox, float oy, float oz, float invR2, Accumulated& out) {
    const F8 zero = {}, one = zero + 1.0f;
    const float k6 = 6.0f * invR2;
    F8 sw = zero, sx = zero, sy = zero, sz = zero, gx = zero, gy = zero, gz = zero;
    F8 cxx = zero, cxy = zero, cxz = zero, cyy = zero, cyz = zero, czz = zero;
    for (size_t j = 0; j < m; j += 8) {
        F8 dx, dy, dz;
        load8(dx, px + j);
        load8(dy, py + j);
        load8(dz, pz + j);
        dx -= ox; // x_j - x
        dy -= oy;
        dz -= oz;
        F8 q = one - (dx * dx + dy * dy + dz * dz) * invR2;
        q = (F8)((I8)q & (q > zero)); // max(q, 0)
        const F8 q2 = q * q;
        const F8 w = q2 * q;
        const F8 cg = k6 * q2; // grad_x w_j = cg (x_j - x)
        sw += w;
        sx += w * dx;
        sy += w * dy;
        sz += w * dz;
        const F8 gdx = cg * dx, gdy = cg * dy, gdz = cg * dz;
        gx += gdx;
        gy += gdy;
        gz += gdz;
        cxx += gdx * dx;
        cxy += gdx * dy;
        cxz += gdx * dz;
        cyy += gdy * dy;
        cyz += gdy * dz;
        czz += gdz * dz;
    }
    out = {total(sw),  total(sx),  total(sy),  total(sz),  total(gx),  total(gy), total(gz),
           total(cxx), total(cxy), total(cxz), total(cyy), total(cyz), total(czz)};
}

void accumulateBaseline(const float* px, const float* py, const float* pz, size_t m, float ox, float oy,
                        float oz, float invR2, Accumulated& out) {
    accumulate(px, py, pz, m, ox, oy, oz, invR2, out);
}

#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void accumulateAvx2(const float* px, const float* py, const float* pz, size_t m,
                                            float ox, float oy, float oz, float invR2, Accumulated& out) {
    accumulate(px, py, pz, m, ox, oy, oz, invR2, out);
}
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
#endif
} // namespace

DistanceField_Solenthaler2007::Sums DistanceField_Solenthaler2007::sums(const float* x, const float* y,
                                                                        const float* z, size_t m,
                                                                        const Vec3f& offset) const {
    Accumulated a;
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        accumulateAvx2(x, y, z, m, offset.x(), offset.y(), offset.z(), invR2_, a);
    else
#endif
        accumulateBaseline(x, y, z, m, offset.x(), offset.y(), offset.z(), invR2_, a);
    Sums s;
    s.sw = a.sw;
    s.sd = Vec3f(a.sx, a.sy, a.sz);
    s.g = Vec3f(a.gx, a.gy, a.gz);
    s.c << a.cxx, a.cxy, a.cxz, a.cxy, a.cyy, a.cyz, a.cxz, a.cyz, a.czz;
    return s;
}

} // namespace octo
