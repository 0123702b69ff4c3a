#pragma once
// Extreme eigenvalues of the symmetric part of a 3x3 matrix, without transcendental calls.
// Shifting and scaling S = qI + pB (q = tr S / 3, p = sqrt(tr (S - qI)^2 / 6)) leaves B with the
// eigenvalues t of t^3 - 3t = det B = 2r, r in [-1, 1] (the trigonometric form of Smith 1961,
// "Eigenvalues of a symmetric 3x3 matrix", writes them 2 cos(acos(r)/3 + 2 pi k/3)). The largest
// root, in [1, 2], is 2 cos(2/3 acos(s)) with s = sqrt((1 + r)/2), a function analytic on s in [0, 1]
// (cos of a square root is a power series), so a degree-8 polynomial in s holds it to 1.8e-8 over the
// whole range: one square root and no division, where acos and cos (or Newton steps, each a
// division in a serial chain) took most of the distance field's per-corner time. The smallest root is
// minus the largest of -r.
#include "common/Types.h"

#include <algorithm>
#include <cmath>

namespace octo {

/// Largest root t in [1, 2] of t^3 - 3t = 2r, r in [-1, 1] (|error| <= 1.8e-8).
inline double largestTrigonometricRoot(double r) {
    // Chebyshev fit of 2 cos(2/3 acos(s)) on s in [0, 1], in powers of x = 2s - 1.
    constexpr double c[] = {1.5320888856909434,     0.49481809707415186,    -0.031018347066910708,
                            0.00493322104816886,    -0.0010085042274802184, 0.00023088081823640627,
                            -5.709229555790225e-05, 1.7785868744849797e-05, -4.939773482679796e-06};
    const double x = 2.0 * std::sqrt(0.5 * (1.0 + r)) - 1.0;
    // Estrin's scheme: four short chains instead of Horner's eight dependent steps.
    const double x2 = x * x, x4 = x2 * x2;
    const double low = (c[0] + c[1] * x) + (c[2] + c[3] * x) * x2;
    const double high = (c[4] + c[5] * x) + (c[6] + c[7] * x) * x2;
    return low + (high + c[8] * x4) * x4;
}

namespace detail {
/// S = qI + pB with det B = 2r, for the symmetric part of m; p = 0 for a multiple of the identity.
struct ShiftedSymmetric3 {
    double q = 0.0, p = 0.0, r = 0.0;
};
inline ShiftedSymmetric3 shiftSymmetric3(const Mat3f& m) {
    const double a = m(0, 0), b = m(1, 1), c = m(2, 2);
    const double d = 0.5 * (double(m(0, 1)) + double(m(1, 0)));
    const double e = 0.5 * (double(m(0, 2)) + double(m(2, 0)));
    const double f = 0.5 * (double(m(1, 2)) + double(m(2, 1)));
    ShiftedSymmetric3 s;
    s.q = (a + b + c) / 3.0;
    const double aq = a - s.q, bq = b - s.q, cq = c - s.q;
    const double p2 = aq * aq + bq * bq + cq * cq + 2.0 * (d * d + e * e + f * f);
    if (!(p2 > 1e-30 * (s.q * s.q + 1e-300)))
        return s; // (nearly) a multiple of the identity
    s.p = std::sqrt(p2 / 6.0);
    const double ip = 1.0 / s.p;
    const double ba = aq * ip, bb = bq * ip, bc = cq * ip, bd = d * ip, be = e * ip, bf = f * ip;
    const double det = ba * (bb * bc - bf * bf) - bd * (bd * bc - bf * be) + be * (bd * bf - bb * be);
    s.r = std::clamp(0.5 * det, -1.0, 1.0);
    return s;
}
} // namespace detail

/// Largest eigenvalue of (m + m^T) / 2.
inline float largestSymmetricEigenvalue(const Mat3f& m) {
    const detail::ShiftedSymmetric3 s = detail::shiftSymmetric3(m);
    if (s.p == 0.0)
        return float(std::max({m(0, 0), m(1, 1), m(2, 2)}));
    return float(s.q + s.p * largestTrigonometricRoot(s.r));
}

/// Smallest eigenvalue of (m + m^T) / 2.
inline float smallestSymmetricEigenvalue(const Mat3f& m) {
    const detail::ShiftedSymmetric3 s = detail::shiftSymmetric3(m);
    if (s.p == 0.0)
        return float(std::min({m(0, 0), m(1, 1), m(2, 2)}));
    return float(s.q - s.p * largestTrigonometricRoot(-s.r));
}

} // namespace octo
