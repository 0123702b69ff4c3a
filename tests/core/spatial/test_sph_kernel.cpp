// The solver's kernels (SphKernel): both integrate to 1 over their support, their gradients are
// W's derivative, the table reproduces them, and the simple cubic lattice sums are the ones the
// mass calibration and docs/ALGORITHMS.md §10 use.
#include "spatial/KernelTable.h"
#include "spatial/SphKernel.h"

#include <QtTest>
#include <cmath>
#include <numbers>

using namespace octo;

class TestSphKernel : public QObject {
    Q_OBJECT
private slots:
    void integratesToOne_data() {
        QTest::addColumn<int>("kind");
        QTest::newRow("cubic") << int(KernelKind::CubicSpline);
        QTest::newRow("wendland") << int(KernelKind::WendlandC2);
    }
    void integratesToOne() {
        QFETCH(int, kind);
        const float h = 0.05f;
        const SphKernel k(h, KernelKind(kind));
        // int W dV = int_0^h 4 pi r^2 W(r) dr, midpoint rule.
        const int n = 20000;
        double sum = 0.0;
        for (int i = 0; i < n; ++i) {
            const double r = (i + 0.5) * h / n;
            sum += 4.0 * std::numbers::pi * r * r * k.W(float(r)) * (h / n);
        }
        QVERIFY2(std::abs(sum - 1.0) < 1e-4, qPrintable(QString("int W = %1").arg(sum)));
        QCOMPARE(k.W(h), 0.0f);
        QCOMPARE(k.W0(), k.W(0.0f));
    }

    void gradientIsTheDerivative_data() { integratesToOne_data(); }
    void gradientIsTheDerivative() {
        QFETCH(int, kind);
        const float h = 0.05f;
        const SphKernel k(h, KernelKind(kind));
        for (float q : {0.1f, 0.3f, 0.5f, 0.7f, 0.95f}) {
            const Vec3f x = q * h * Vec3f(0.6f, 0.0f, 0.8f);
            const float e = 1e-4f * h;
            const double dWdr = (double(k.W(q * h + e)) - double(k.W(q * h - e))) / (2.0 * e);
            const Vec3f g = k.gradW(x);
            QVERIFY2(std::abs(g.norm() - std::abs(dWdr)) < 2e-3 * std::abs(dWdr) + 1e-2,
                     qPrintable(QString("q %1: |grad W| %2, dW/dr %3").arg(q).arg(g.norm()).arg(dWdr)));
            QVERIFY(g.dot(x) < 0.0f); // W falls off with distance
        }
    }

    void tableMatchesTheKernel() {
        const float h = 0.04f;
        const SphKernel k(h, KernelKind::WendlandC2);
        KernelTable t;
        t.setKernel(k);
        QCOMPARE(t.W0(), k.W0());
        for (float q : {0.05f, 0.25f, 0.5f, 0.75f, 0.99f}) {
            const float r = q * h;
            QVERIFY(std::abs(t.W(r * r) - k.W(r)) < 1e-3f * k.W0());
            const Vec3f x(r, 0.0f, 0.0f);
            QVERIFY(std::abs(t.gradFactor(r * r) * r - k.gradW(x).x()) <
                    2e-3f * std::abs(k.gradW(x).x()) + 1e-3f);
        }
        QCOMPARE(t.W(h * h * 1.01f), 0.0f);
    }

    void latticeSums() {
        // d0 = h / 2 as in the solver (d0 = 2r, h = 4r).
        const float d0 = 0.02f;
        QVERIFY(std::abs(SphKernel(2.0f * d0, KernelKind::CubicSpline).latticeSum(d0) - 1.0f) < 1e-3f);
        const float wendland = SphKernel(2.0f * d0, KernelKind::WendlandC2).latticeSum(d0);
        QVERIFY2(std::abs(wendland - 1.0338f) < 1e-3f, qPrintable(QString("%1").arg(wendland)));
    }
};

QTEST_MAIN(TestSphKernel)
#include "test_sph_kernel.moc"
