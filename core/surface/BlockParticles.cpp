#include "surface/BlockParticles.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>

namespace octo {

int BlockParticles::slab(float v, int axis) const {
    const float s = std::floor((v - lo_[axis]) * invWidth_[axis]);
    return s < 0.0f ? 0 : (s >= float(kSlabs - 1) ? kSlabs - 1 : int(s));
}

void BlockParticles::collect(const NeighborGrid& grid, std::span<const Vec3f> xs, const Vec3f& lo,
                             const Vec3f& hi) {
    lo_ = lo;
    invWidth_ = Vec3f::Constant(float(kSlabs)).cwiseQuotient(hi - lo);
    unsorted_.clear();
    bucket_.clear();
    std::array<uint32_t, kSlabs * kSlabs> count{};
    grid.forEachRangeInBox(lo, hi, [&](uint32_t b, uint32_t e) {
        for (uint32_t j = b; j < e; ++j) {
            const Vec3f& p = xs[j];
            if ((p.array() < lo.array()).any() || (p.array() > hi.array()).any())
                continue;
            const int k = slab(p.z(), 2) * kSlabs + slab(p.y(), 1);
            unsorted_.push_back(p);
            bucket_.push_back(uint8_t(k));
            ++count[size_t(k)];
        }
        return true;
    });
    uint32_t s = 0;
    for (size_t k = 0; k < count.size(); ++k) {
        start_[k] = s;
        s += count[k];
    }
    start_.back() = s;
    x_.resize(s);
    y_.resize(s);
    z_.resize(s);
    std::array<uint32_t, kSlabs * kSlabs> cursor;
    std::copy(start_.begin(), start_.end() - 1, cursor.begin());
    for (size_t i = 0; i < unsorted_.size(); ++i) {
        const uint32_t at = cursor[bucket_[i]]++;
        x_[at] = unsorted_[i].x();
        y_[at] = unsorted_[i].y();
        z_[at] = unsorted_[i].z();
    }
}

void BlockParticles::appendNear(const Vec3f& centre, float reach,
                                DistanceField_Solenthaler2007::Candidates& cand) const {
    cand.clear();
    const int z0 = slab(centre.z() - reach, 2), z1 = slab(centre.z() + reach, 2);
    const int y0 = slab(centre.y() - reach, 1), y1 = slab(centre.y() + reach, 1);
    const float cx = centre.x(), cy = centre.y(), cz = centre.z(), reach2 = reach * reach;
    for (int z = z0; z <= z1; ++z) {
        const uint32_t b = start_[size_t(z * kSlabs + y0)], e = start_[size_t(z * kSlabs + y1 + 1)];
        float* out[3];
        const size_t k0 = cand.reserveMore(e - b, out);
        size_t k = 0;
        uint32_t j = b;
#if defined(__SSE2__)
        const __m128 vx = _mm_set1_ps(cx), vy = _mm_set1_ps(cy), vz = _mm_set1_ps(cz),
                     vr = _mm_set1_ps(reach2);
        for (; j + 4 <= e; j += 4) {
            const __m128 dx = _mm_sub_ps(_mm_loadu_ps(x_.data() + j), vx);
            const __m128 dy = _mm_sub_ps(_mm_loadu_ps(y_.data() + j), vy);
            const __m128 dz = _mm_sub_ps(_mm_loadu_ps(z_.data() + j), vz);
            const __m128 d2 =
                _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)), _mm_mul_ps(dz, dz));
            for (unsigned bits = unsigned(_mm_movemask_ps(_mm_cmple_ps(d2, vr))); bits; bits &= bits - 1) {
                const uint32_t jj = j + uint32_t(std::countr_zero(bits));
                out[0][k] = x_[jj] - cx;
                out[1][k] = y_[jj] - cy;
                out[2][k] = z_[jj] - cz;
                ++k;
            }
        }
#endif
        for (; j < e; ++j) {
            const float dx = x_[j] - cx, dy = y_[j] - cy, dz = z_[j] - cz;
            out[0][k] = dx;
            out[1][k] = dy;
            out[2][k] = dz;
            k += (dx * dx + dy * dy + dz * dz <= reach2) ? 1 : 0;
        }
        cand.count = k0 + k;
    }
    cand.seal();
}

size_t BlockParticles::bytes() const {
    return (x_.capacity() + y_.capacity() + z_.capacity()) * sizeof(float) +
           unsorted_.capacity() * sizeof(Vec3f) + bucket_.capacity();
}

} // namespace octo
