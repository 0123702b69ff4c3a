// The container's walls give a fluid particle at rest the rest density wherever it is: on a flat
// wall (planarWallPsiScale), and in the concave edges and corners too once setWall fits the walls'
// Psi to the rest lattice (Koschier & Bender 2017's density-map condition; BoundaryModel.cpp,
// calibrateWallPsi). Akinci's volumes alone leave the edges and corners under-dense, so the water
// there compresses further than elsewhere and the surface creeps up the edges (issue 26).
#include "spatial/SphKernel.h"
#include "sph/BoundaryModel.h"

#include <QtTest>
#include <algorithm>
#include <cmath>

using namespace octo;

namespace {

constexpr float kR = 0.012f, kD0 = 2.0f * kR, kH = 4.0f * kR, kRho0 = 1000.0f;
const Aabb kBox(Vec3f::Zero(), Vec3f(12 * kD0, 10 * kD0, 8 * kD0));

struct Extremes {
    float flat = 0.0f, edge = 0.0f, corner = 0.0f; // largest |rho / rho0 - 1| of each kind of site
};

/// rho / rho0 at every site of the rest lattice filling kBox (the fluid's mass as FluidModel sets
/// it), the largest deviation at sites beside one wall, in an edge and in a corner.
Extremes restDensity(KernelKind kind, bool fitted) {
    BoundaryModel b;
    b.setKernel(kH, kRho0, kind);
    const int walls = b.addObject(sampleBoxWalls(kBox, kD0, 2), true, planarWallPsiScale(kH, kD0, 2, kind));
    if (fitted)
        b.setWall(walls, kBox, kD0);
    else
        b.setWall(walls);
    const SphKernel W(kH, kind);
    const float mass = kRho0 * kD0 * kD0 * kD0 / (kind == KernelKind::CubicSpline ? 1.0f : W.latticeSum(kD0));
    const auto xb = b.positions();
    const auto psi = b.psi();
    const int n[3] = {12, 10, 8};
    Extremes e;
    for (int i = 0; i < n[0]; ++i)
        for (int j = 0; j < n[1]; ++j)
            for (int k = 0; k < n[2]; ++k) {
                const int at[3] = {i, j, k};
                int faces = 0;
                for (int a = 0; a < 3; ++a)
                    faces += (at[a] == 0 || at[a] == n[a] - 1) ? 1 : 0;
                if (faces == 0)
                    continue;
                const Vec3f x = kD0 * Vec3f(float(i) + 0.5f, float(j) + 0.5f, float(k) + 0.5f);
                float rho = 0.0f;
                for (int p = 0; p < n[0]; ++p)
                    for (int q = 0; q < n[1]; ++q)
                        for (int s = 0; s < n[2]; ++s)
                            rho += mass *
                                   W.W(x - kD0 * Vec3f(float(p) + 0.5f, float(q) + 0.5f, float(s) + 0.5f));
                for (size_t l = 0; l < xb.size(); ++l)
                    rho += psi[l] * W.W(x - xb[l]);
                const float dev = std::abs(rho / kRho0 - 1.0f);
                float& slot = faces == 1 ? e.flat : faces == 2 ? e.edge : e.corner;
                slot = std::max(slot, dev);
            }
    return e;
}

} // namespace

class TestWallRestDensity : public QObject {
    Q_OBJECT
private slots:
    void restLatticeHasRestDensityInEdgesAndCorners_data() {
        QTest::addColumn<int>("kernel");
        QTest::newRow("cubic") << int(KernelKind::CubicSpline);
        QTest::newRow("wendland") << int(KernelKind::WendlandC2);
    }
    void restLatticeHasRestDensityInEdgesAndCorners() {
        QFETCH(int, kernel);
        const Extremes akinci = restDensity(KernelKind(kernel), false);
        const Extremes fitted = restDensity(KernelKind(kernel), true);
        qInfo("|rho/rho0 - 1|: Akinci + planar scale: flat %.5f, edge %.5f, corner %.5f; fitted: %.6f, %.6f, "
              "%.6f",
              akinci.flat, akinci.edge, akinci.corner, fitted.flat, fitted.edge, fitted.corner);
        // Flat walls were calibrated before (planarWallPsiScale), the edges and corners were not
        // (measured: 0.4 % and 1.1 % under rho0 with Wendland C2).
        QVERIFY(akinci.flat < 1e-3f);
        QVERIFY(std::max(akinci.edge, akinci.corner) > 3e-3f);
        QVERIFY2(
            std::max({fitted.flat, fitted.edge, fitted.corner}) < 1e-4f,
            qPrintable(QString("fitted: %1 %2 %3").arg(fitted.flat).arg(fitted.edge).arg(fitted.corner)));
    }

    void fittedPsiSurvivesAKernelChange() {
        BoundaryModel b;
        b.setKernel(kH, kRho0);
        const int walls = b.addObject(sampleBoxWalls(kBox, kD0, 2), true, planarWallPsiScale(kH, kD0, 2));
        b.setWall(walls, kBox, kD0);
        const std::vector<float> fitted(b.psi().begin(), b.psi().end());
        b.setKernel(kH, 2.0f * kRho0);
        b.setKernel(kH, kRho0);
        for (size_t k = 0; k < fitted.size(); ++k)
            QCOMPARE(b.psi()[k], fitted[k]);
    }
};

QTEST_APPLESS_MAIN(TestWallRestDensity)
#include "test_wall_rest_density.moc"
