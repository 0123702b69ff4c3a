// Cubic spline kernel: normalisation, gradient symmetry, compact support; the solver's table.
#include "spatial/CubicSplineKernel.h"
#include "spatial/KernelTable.h"

#include <QtTest>
#include <cmath>
#include <random>

using namespace octo;

class TestKernel : public QObject {
    Q_OBJECT
private slots:
    void integralOverFineLatticeIsOne() {
        const float h = 0.1f;
        const CubicSplineKernel k(h);
        for (float spacing : {h / 10.0f, h / 7.3f}) {
            const int n = int(std::ceil(h / spacing)) + 1;
            double sum = 0.0;
            for (int i = -n; i <= n; ++i)
                for (int j = -n; j <= n; ++j)
                    for (int l = -n; l <= n; ++l)
                        sum += k.W(spacing * Vec3f(float(i), float(j), float(l)));
            sum *= double(spacing) * spacing * spacing;
            QVERIFY2(std::abs(sum - 1.0) < 0.01, qPrintable(QString("lattice integral %1").arg(sum)));
        }
    }

    void gradientIsAntisymmetricAndPointsInward() {
        const CubicSplineKernel k(0.2f);
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> u(-0.15f, 0.15f);
        for (int t = 0; t < 1000; ++t) {
            const Vec3f r(u(rng), u(rng), u(rng));
            const Vec3f g = k.gradW(r), gm = k.gradW(-r);
            QVERIFY((g + gm).norm() <= 1e-5f * (1.0f + g.norm()));
            if (r.norm() < 0.2f && r.norm() > 1e-4f)
                QVERIFY(g.dot(r) < 0.0f); // W falls with distance
        }
        QCOMPARE(k.gradW(Vec3f::Zero()).norm(), 0.0f);
    }

    void zeroOutsideSupport() {
        const float h = 0.05f;
        const CubicSplineKernel k(h);
        QCOMPARE(k.W(h), 0.0f);
        QCOMPARE(k.W(1.5f * h), 0.0f);
        QCOMPARE(k.gradW(Vec3f(h, 0, 0)).norm(), 0.0f);
        QCOMPARE(k.gradW(Vec3f(0.8f * h, 0.8f * h, 0)).norm(), 0.0f);
        QVERIFY(k.W(0.999f * h) >= 0.0f);
        QVERIFY(k.W(0.0f) > k.W(0.3f * h));
    }

    void tableMatchesAnalyticKernel() {
        const float h = 0.04f;
        const CubicSplineKernel k(h);
        const KernelTable t(h);
        const float wMax = k.W0(), gMax = k.gradW(Vec3f(0.33f * h, 0, 0)).norm();
        for (int i = 1; i < 2000; ++i) {
            const float r = h * 1.2f * float(i) / 2000.0f;
            const Vec3f x(r * 0.6f, r * 0.8f, 0.0f);
            QVERIFY2(std::abs(t.W(r * r) - k.W(r)) <= 1e-3f * wMax,
                     qPrintable(QString("W at r/h %1").arg(r / h)));
            const Vec3f g = t.gradFactor(r * r) * x;
            if (r > 0.02f * h)
                QVERIFY2((g - k.gradW(x)).norm() <= 2e-3f * gMax,
                         qPrintable(QString("gradW at r/h %1").arg(r / h)));
        }
        QCOMPARE(t.W(h * h * 1.5f), 0.0f);
        QCOMPARE(t.gradFactor(h * h * 1.5f), 0.0f);
    }
};

QTEST_APPLESS_MAIN(TestKernel)
#include "test_kernel.moc"
