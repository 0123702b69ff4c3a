// Four-lane helpers (Lanes.h) and the four-lane table lookups: every lane holds bit for bit what
// the scalar code computes for it (the solver's pair loops rely on it for byte-identical frames).
#include "spatial/KernelTable.h"
#include "spatial/Lanes.h"
#include "spatial/TabulatedFunction.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace octo;

namespace {
uint32_t bits(float v) {
    return std::bit_cast<uint32_t>(v);
}

/// r^2 values at the edges of a table of range h2 and at random inside and beyond it.
std::vector<float> probeValues(float h2, int samples) {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> s = {0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            h2,
                            std::nextafter(h2, 0.0f),
                            std::nextafter(h2, inf),
                            2.0f * h2,
                            1e30f,
                            inf,
                            std::numeric_limits<float>::quiet_NaN()};
    for (int i = 0; i <= samples; ++i) { // on every sample and just beside it
        const float si = float(i) * h2 / float(samples);
        s.push_back(si);
        s.push_back(std::nextafter(si, 0.0f));
        s.push_back(std::nextafter(si, inf));
    }
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> inside(0.0f, h2), beyond(h2, 3.0f * h2);
    for (int i = 0; i < 20000; ++i)
        s.push_back(i % 8 == 7 ? beyond(rng) : inside(rng));
    while (s.size() % 4 != 0)
        s.push_back(0.5f * h2);
    return s;
}

Float4 load4(const float* p) {
    Float4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
} // namespace

class TestLanes : public QObject {
    Q_OBJECT
private slots:
    void laneBitsOfEveryMask() {
        for (unsigned m = 0; m < 16; ++m) {
            const Int4 mask = {m & 1 ? -1 : 0, m & 2 ? -1 : 0, m & 4 ? -1 : 0, m & 8 ? -1 : 0};
            QCOMPARE(laneBits4(mask), m);
        }
        // From a lane comparison, as the callers make their masks.
        const Float4 a{1.0f, 5.0f, -2.0f, 7.0f}, b{2.0f, 4.0f, -1.0f, 7.0f};
        QCOMPARE(laneBits4(a < b), 0b0101u);
        QCOMPARE(laneBits4(a <= b), 0b1101u);
        QCOMPARE(laneBits4(a != a), 0u);
    }

    void transposeSwapsRowsAndLanes() {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        Float4 r[4] = {{1.0f, 2.0f, 3.0f, 4.0f},
                       {-0.0f, 6.0f, 7.0f, 8.0f},
                       {9.0f, nan, 11.0f, 12.0f},
                       {13.0f, 14.0f, 1e-45f, -16.0f}};
        const Float4 in[4] = {r[0], r[1], r[2], r[3]};
        transpose4(r[0], r[1], r[2], r[3]);
        for (int k = 0; k < 4; ++k)
            for (int l = 0; l < 4; ++l)
                QCOMPARE(bits(r[l][k]), bits(in[k][l])); // every bit moved, -0, NaN and denormal too
        transpose4(r[0], r[1], r[2], r[3]);
        for (int k = 0; k < 4; ++k)
            for (int l = 0; l < 4; ++l)
                QCOMPARE(bits(r[k][l]), bits(in[k][l]));
    }
    void adjacentGathersReadBothSamples() {
        std::vector<float> t(64), pairs(130);
        for (size_t k = 0; k < t.size(); ++k)
            t[k] = float(k) * 0.5f - 3.0f;
        for (size_t k = 0; k < pairs.size(); ++k)
            pairs[k] = float(k) * 0.25f + 1.0f;
        const Int4 idx = {0, 62, 7, 7}; // the first and last samples, a repeated lane
        Float4 at, next;
        gatherAdjacent4(t.data(), idx, at, next);
        Float4 r[4];
        gatherAdjacentPairs4(pairs.data(), idx, r);
        for (int l = 0; l < 4; ++l) {
            const size_t i = size_t(idx[l]);
            QCOMPARE(bits(at[l]), bits(t[i]));
            QCOMPARE(bits(next[l]), bits(t[i + 1]));
            for (int k = 0; k < 4; ++k) // f_i, g_i, f_i+1, g_i+1
                QCOMPARE(bits(r[k][l]), bits(pairs[2 * i + size_t(k)]));
        }
    }
    void kernelTableCopiedSamplesGiveItsLookups() {
        // NonPressureForces stores KernelTable's samples side by side and reads them with the
        // table's own locate: the same values, bit for bit.
        const float h = 0.0504f;
        const KernelTable table(h);
        const TabulatedFunction& g = table.gradFactorTable();
        std::vector<float> copy(size_t(g.samples()) + 2);
        for (int i = 0; i < g.samples() + 2; ++i)
            copy[size_t(i)] = g.value(i);
        const std::vector<float> s = probeValues(h * h, g.samples());
        for (size_t k = 0; k < s.size(); k += 4) {
            const Float4 r2 = load4(s.data() + k);
            const TabulatedFunction::Position4 p = g.locate(r2);
            Float4 at, next;
            gatherAdjacent4(copy.data(), p.i, at, next);
            const Float4 v = at + p.u * (next - at);
            for (int l = 0; l < 4; ++l)
                QVERIFY2(bits(v[l]) == bits(table.gradFactor(s[k + size_t(l)])),
                         qPrintable(QString::number(s[k + size_t(l)])));
        }
    }
    void selectTakesLanesByMask() {
        const Float4 a{1.0f, -0.0f, 3.0f, std::numeric_limits<float>::infinity()},
            b{-1.0f, 0.0f, -3.0f, 4.0f};
        for (unsigned m = 0; m < 16; ++m) {
            const Int4 mask = {m & 1 ? -1 : 0, m & 2 ? -1 : 0, m & 4 ? -1 : 0, m & 8 ? -1 : 0};
            const Float4 r = select4(mask, a, b);
            for (int l = 0; l < 4; ++l)
                QCOMPARE(bits(r[l]), bits(m >> l & 1 ? a[l] : b[l]));
        }
        QCOMPARE(bits(broadcast4(-0.0f)[3]), bits(-0.0f));
    }

    void sumOfThreeInEigensOrder() {
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int i = 0; i < 10000; ++i) {
            float x[4], y[4], z[4];
            for (int l = 0; l < 4; ++l)
                x[l] = u(rng), y[l] = 1e-4f * u(rng), z[l] = 1e4f * u(rng);
            const Float4 s = sum3(load4(x), load4(y), load4(z));
            for (int l = 0; l < 4; ++l) {
                const Vec3f v(std::sqrt(std::abs(x[l])), std::sqrt(std::abs(y[l])),
                              std::sqrt(std::abs(z[l])));
                QCOMPARE(bits(s[l]), bits(x[l] + (y[l] + z[l])));
                // The sum as Eigen forms a squared norm, the operation the lanes reproduce.
                const Float4 vv =
                    sum3(broadcast4(v.x() * v.x()), broadcast4(v.y() * v.y()), broadcast4(v.z() * v.z()));
                QCOMPARE(bits(vv[l]), bits(v.squaredNorm()));
            }
        }
    }

    void tabulatedFunctionLanesEqualScalar() {
        TabulatedFunction f;
        const float range = 0.0004f; // (2 cm)^2
        f.sample(range, 256, [](int, float s) { return std::exp(-3000.0f * s) - 0.25f; });
        const auto s = probeValues(range, 256);
        for (size_t k = 0; k < s.size(); k += 4) {
            const Float4 v = f(load4(&s[k]));
            for (int l = 0; l < 4; ++l)
                QVERIFY2(bits(v[l]) == bits(f(s[k + size_t(l)])),
                         qPrintable(QString::number(s[k + size_t(l)])));
        }
    }

    void kernelTableLanesEqualScalar() {
        for (KernelKind kind : {KernelKind::CubicSpline, KernelKind::WendlandC2}) {
            KernelTable table;
            const float h = 0.02f;
            table.setKernel(SphKernel(h, kind));
            const auto s = probeValues(h * h, KernelTable::kSamples);
            size_t nonzero = 0;
            for (size_t k = 0; k < s.size(); k += 4) {
                const Float4 g = table.gradFactor(load4(&s[k]));
                for (int l = 0; l < 4; ++l) {
                    const float r2 = s[k + size_t(l)];
                    QVERIFY2(bits(g[l]) == bits(table.gradFactor(r2)), qPrintable(QString::number(r2)));
                    const auto [w, gw] = table.WAndGradFactor(r2);
                    QCOMPARE(bits(w), bits(table.W(r2)));
                    QCOMPARE(bits(gw), bits(table.gradFactor(r2)));
                    nonzero += w != 0.0f;
                }
            }
            QVERIFY(nonzero > s.size() / 2); // the probes are mostly inside the support
            // Past the support (and for NaN) every lookup is exactly 0.
            const float inf = std::numeric_limits<float>::infinity();
            const Float4 past = table.gradFactor(Float4{h * h, 2.0f * h * h, inf, std::nanf("")});
            for (int l = 0; l < 4; ++l)
                QCOMPARE(bits(past[l]), bits(0.0f));
            QCOMPARE(table.WAndGradFactor(h * h).first, 0.0f);
        }
    }
};

QTEST_MAIN(TestLanes)
#include "test_lanes.moc"
