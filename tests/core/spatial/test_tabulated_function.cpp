// TabulatedFunction: linear interpolation over s = |x|^2 between equal samples, 0 from the end of
// its range on (and for NaN), as KernelTable and SurfaceTension_Akinci2013 read it.
#include "spatial/TabulatedFunction.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace octo;

class TestTabulatedFunction : public QObject {
    Q_OBJECT
private slots:
    void interpolatesLinearlyBetweenSamples() {
        TabulatedFunction f;
        f.sample(2.0f, 8, [](int, float s) { return 1.0f + 3.0f * s; }); // samples every 0.25
        QCOMPARE(f.samples(), 8);
        QCOMPARE(f.sampleAt(3), 0.75f);
        QCOMPARE(f(0.0f), 1.0f);
        QCOMPARE(f(0.5f), 2.5f);     // on a sample
        QCOMPARE(f(0.625f), 2.875f); // halfway between two samples: exact for a linear function
        // Between the last sample (s = 1.75) and the range's end the table falls to 0 linearly.
        QCOMPARE(f(1.875f), 0.5f * (1.0f + 3.0f * 1.75f));
    }

    void zeroPastTheRange() {
        TabulatedFunction f;
        f.sample(1.0f, 4, [](int, float) { return 5.0f; });
        QCOMPARE(f(1.0f), 0.0f);
        QCOMPARE(f(7.0f), 0.0f);
        QCOMPARE(f(std::numeric_limits<float>::infinity()), 0.0f);
        QCOMPARE(f(std::numeric_limits<float>::quiet_NaN()), 0.0f);
    }

    void filledBySet() {
        TabulatedFunction f;
        f.reset(1.0f, 4);
        QCOMPARE(f(0.5f), 0.0f);
        f.set(2, 8.0f);
        QCOMPARE(f(0.5f), 8.0f);
        QCOMPARE(f(0.625f), 4.0f); // towards the zero sample 3
        QCOMPARE(f.inverseSpacing(), 4.0f);
    }
};

QTEST_MAIN(TestTabulatedFunction)
#include "test_tabulated_function.moc"
