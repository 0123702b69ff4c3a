#include "sph/SurfaceTension_Akinci2013.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace octo {

float SurfaceTension_Akinci2013::cohesionKernel(float r, float h) {
    if (!(r > 0.0f) || r > h)
        return 0.0f;
    const float norm = 32.0f / (std::numbers::pi_v<float> * std::pow(h, 9.0f));
    const float t = (h - r) * (h - r) * (h - r) * r * r * r;
    if (2.0f * r > h)
        return norm * t;
    const float h3 = h * h * h;
    return norm * (2.0f * t - h3 * h3 / 64.0f);
}

float SurfaceTension_Akinci2013::adhesionKernel(float r, float h) {
    if (2.0f * r <= h || r > h)
        return 0.0f;
    const float inner = std::max(0.0f, -4.0f * r * r / h + 6.0f * r - 2.0f * h);
    return 0.007f / std::pow(h, 3.25f) * std::pow(inner, 0.25f);
}

void SurfaceTension_Akinci2013::setSupportRadius(float h) {
    h_ = h;
    const float h2 = h * h;
    // The repulsive core of C grows like 1/r towards r = 0; the first bin uses its midpoint
    // (particles never come that close under PCISPH pressure).
    const float rMin = std::sqrt(0.5f / (float(kSamples) / h2));
    c_.sample(h2, kSamples, [&](int, float s) {
        const float r = std::max(std::sqrt(s), rMin);
        return cohesionKernel(r, h) / r;
    });
    a_.sample(h2, kSamples, [&](int, float s) {
        const float r = std::max(std::sqrt(s), rMin);
        return adhesionKernel(r, h) / r;
    });
    // Both kernels reach 0 at r = h: the table's zero sample there closes it continuously.
    // Potentials: integrated inwards from r = h with Simpson's rule between the samples (the
    // kernels themselves are finite at r = 0; the last sample is r = h, U = 0).
    uc_.reset(h2, kSamples);
    ua_.reset(h2, kSamples);
    const double invDs = uc_.inverseSpacing();
    double uc = 0.0, ua = 0.0;
    for (int i = kSamples - 1; i >= 0; --i) {
        const double r0 = std::sqrt(double(i) / invDs), r1 = std::sqrt(double(i + 1) / invDs);
        const float rm = float(0.5 * (r0 + r1));
        const double w = (r1 - r0) / 6.0;
        uc -= w * (cohesionKernel(float(r0), h) + 4.0 * cohesionKernel(rm, h) + cohesionKernel(float(r1), h));
        ua -= w * (adhesionKernel(float(r0), h) + 4.0 * adhesionKernel(rm, h) + adhesionKernel(float(r1), h));
        uc_.set(i, float(uc));
        ua_.set(i, float(ua));
    }
}

} // namespace octo
