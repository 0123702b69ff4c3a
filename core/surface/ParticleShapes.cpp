#include "surface/ParticleShapes.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace octo {

std::vector<Vec3f> latticeBlock(const Vec3f& origin, int nx, int ny, int nz, float spacing) {
    std::vector<Vec3f> p;
    p.reserve(size_t(nx) * size_t(ny) * size_t(nz));
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i)
                p.push_back(origin + spacing * Vec3f(float(i), float(j), float(k)));
    return p;
}

std::vector<Vec3f> latticeSphere(const Vec3f& centre, float radius, float spacing) {
    std::vector<Vec3f> p;
    const int m = int(std::floor(radius / spacing));
    for (int k = -m; k <= m; ++k)
        for (int j = -m; j <= m; ++j)
            for (int i = -m; i <= m; ++i) {
                const Vec3f d = spacing * Vec3f(float(i), float(j), float(k));
                if (d.norm() <= radius)
                    p.push_back(centre + d);
            }
    return p;
}

std::vector<Vec3f> shellSphere(const Vec3f& centre, float radius, float spacing) {
    std::vector<Vec3f> p;
    const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
    for (int k = 0;; ++k) {
        const double rho = double(radius) - double(spacing) * (k + 0.5);
        if (rho <= 0.0)
            break;
        const int count =
            std::max(1, int(std::lround(4.0 * std::numbers::pi * rho * rho / (double(spacing) * spacing))));
        const double twist = 0.7 * k; // decorrelate neighbouring shells
        for (int i = 0; i < count; ++i) {
            const double y = count == 1 ? 0.0 : 1.0 - 2.0 * (i + 0.5) / count;
            const double ring = std::sqrt(std::max(0.0, 1.0 - y * y));
            const double a = golden * i + twist;
            p.push_back(centre +
                        float(rho) * Vec3f(float(ring * std::cos(a)), float(y), float(ring * std::sin(a))));
        }
    }
    return p;
}

std::vector<Vec3f> damBreakFrame(size_t n, float d0, uint32_t seed) {
    // Shape in lattice units, scaled by s so that the count comes out near n:
    // wedge: x in [0, 4s), z in [0, 2s), y below 3s (1 - x / 6s); tongue: x in [4s, 8s), y < 0.15s;
    // splash: 3% of n droplets in a box above the tongue's front.
    const double unitCount = 4.0 * 2.0 * 3.0 * (1.0 - 2.0 / 6.0) + 4.0 * 2.0 * 0.15; // volume / s^3
    const double s = std::cbrt(double(n) * 0.97 / unitCount);
    std::vector<Vec3f> p;
    p.reserve(n + n / 20);
    const int nx = int(8.0 * s), nz = int(2.0 * s), ny = int(3.0 * s) + 1;
    for (int k = 0; k < nz; ++k)
        for (int i = 0; i < nx; ++i) {
            const double x = i;
            const double top = x < 4.0 * s ? 3.0 * s * (1.0 - x / (6.0 * s)) : 0.15 * s;
            for (int j = 0; j < ny && j < top; ++j)
                p.push_back(d0 * Vec3f(float(i), float(j), float(k)));
        }
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> ux(float(5.0 * s), float(8.0 * s)),
        uy(float(0.5 * s), float(1.5 * s)), uz(0.0f, float(2.0 * s));
    const size_t drops = n > p.size() ? n - p.size() : n / 50;
    for (size_t q = 0; q < drops; ++q)
        p.push_back(d0 * Vec3f(ux(rng), uy(rng), uz(rng)));
    return p;
}

} // namespace octo
