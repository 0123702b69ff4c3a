#include "sim/SolverSurfaceDetection.h"

#include "common/SymmetricEigen3.h"
#include "sph/PcisphSolver.h"
#include "surface/SurfaceDetection_Marrone2010.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace octo {

void SolverSurfaceDetection::computeLambda(const PcisphSolver& solver, std::span<float> lambda) {
    const FluidState& st = solver.state();
    const size_t n = st.size();
    if (lambda.size() != n)
        throw std::invalid_argument(
            "SolverSurfaceDetection: lambda array size differs from the particle count");
    const float h = solver.supportRadius(), invH = 1.0f / h;
    const float k = 8.0f / (std::numbers::pi_v<float> * h * h * h);
    const float mass = solver.mass();
    const Vec3f* xs = st.positions.data();
    const float* rho = st.densities.data();
    tbb::parallel_for(
        tbb::blocked_range<uint32_t>(0, uint32_t(n), 512), [&](const tbb::blocked_range<uint32_t>& r) {
            for (uint32_t i = r.begin(); i < r.end(); ++i) {
                const Vec3f xi = xs[i];
                // Same terms as the standalone detection: s_j = -V_j (dW/dq) / (h |x_ij|),
                // dW/dq = k (-6 max(0,1-q)^2 + 24 max(0,1/2-q)^2); L = sum_j s_j x_ij x_ij^T.
                float l00 = 0, l01 = 0, l02 = 0, l11 = 0, l12 = 0, l22 = 0;
                for (const uint32_t j : solver.fluidNeighbors(i)) {
                    const float dx = xi.x() - xs[j].x(), dy = xi.y() - xs[j].y(), dz = xi.z() - xs[j].z();
                    const float d = std::sqrt(dx * dx + dy * dy + dz * dz), q = d * invH;
                    const float a = std::max(0.0f, 1.0f - q), b = std::max(0.0f, 0.5f - q);
                    const float v = rho[j] > 0.0f ? mass / rho[j] : 0.0f;
                    const float s = -v * k * (-6.0f * a * a + 24.0f * b * b) * invH / std::max(d, 1e-20f);
                    l00 += s * dx * dx;
                    l01 += s * dx * dy;
                    l02 += s * dx * dz;
                    l11 += s * dy * dy;
                    l12 += s * dy * dz;
                    l22 += s * dz * dz;
                }
                Mat3f L;
                L << l00, l01, l02, l01, l11, l12, l02, l12, l22;
                lambda[i] = smallestSymmetricEigenvalue(L);
            }
        });
}

} // namespace octo
