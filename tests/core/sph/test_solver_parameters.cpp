// One source of defaults (issue 26): the solver's Config defaults are the parameter table's, and
// every solver parameter of the table reaches the Config through SphSolver::configFrom.
#include "common/Parameters.h"
#include "sph/SphSolver.h"

#include <QtTest>

using namespace octo;

namespace {
using Config = SphSolver::Config;
struct Field {
    const char* parameter;
    double (*read)(const Config&);
};
// Each table parameter the solver uses, and how to read it back from a Config.
// Config holds floats: compared in float precision (1 + x, so that 0 compares too).
bool same(double a, double b) {
    return qFuzzyCompare(1.0f + float(a), 1.0f + float(b));
}

const std::vector<Field>& fields() {
    static const std::vector<Field> f = {
        {"pressureSolver",
         [](const Config& c) { return double(c.pressureSolver == SphSolver::PressureSolver::Dfsph); }},
        {"kernel", [](const Config& c) { return double(c.kernel == KernelKind::WendlandC2); }},
        {"particleRadius", [](const Config& c) { return double(c.particleRadius); }},
        {"restDensity", [](const Config& c) { return double(c.restDensity); }},
        {"densityErrorTolerance", [](const Config& c) { return double(c.densityErrorTolerance); }},
        {"divergenceErrorTolerance", [](const Config& c) { return double(c.divergenceErrorTolerance); }},
        {"dfsphMirrorWalls", [](const Config& c) { return double(c.dfsphMirrorWalls); }},
        {"minIterations", [](const Config& c) { return double(c.minIterations); }},
        {"maxIterations", [](const Config& c) { return double(c.maxIterations); }},
        {"timeStepMin", [](const Config& c) { return double(c.timeStepMin); }},
        {"timeStepMax", [](const Config& c) { return double(c.timeStepMax); }},
        {"cflFactor", [](const Config& c) { return double(c.cflFactor); }},
        {"viscosity", [](const Config& c) { return double(c.viscosity); }},
        {"velocityFilter", [](const Config& c) { return double(c.velocityFilter); }},
        {"velocityFilterRate", [](const Config& c) { return double(c.velocityFilterRate); }},
        {"velocityFilterLinearExact", [](const Config& c) { return double(c.velocityFilterLinearExact); }},
        {"boundaryFriction", [](const Config& c) { return double(c.boundaryFriction); }},
        {"surfaceTension", [](const Config& c) { return double(c.surfaceTension); }},
        {"adhesion", [](const Config& c) { return double(c.adhesion); }},
        {"wallCohesion", [](const Config& c) { return double(c.wallCohesion); }},
        {"vorticityConfinement", [](const Config& c) { return double(c.vorticityConfinement); }},
        {"gravityX", [](const Config& c) { return double(c.gravity.x()); }},
        {"gravityY", [](const Config& c) { return double(c.gravity.y()); }},
        {"gravityZ", [](const Config& c) { return double(c.gravity.z()); }},
    };
    return f;
}
} // namespace

class TestSolverParameters : public QObject {
    Q_OBJECT
private slots:
    void configDefaultsAreTheTables() {
        const Config own, fromTable = SphSolver::configFrom(ParameterSet{});
        for (const Field& f : fields()) {
            const ParameterInfo* info = findParameter(f.parameter);
            QVERIFY2(info, f.parameter);
            QVERIFY2(same(f.read(own), info->defaultValue), qPrintable(QString("%1: Config %2, table %3")
                                                                           .arg(f.parameter)
                                                                           .arg(f.read(own))
                                                                           .arg(info->defaultValue)));
            QVERIFY2(same(f.read(fromTable), info->defaultValue), f.parameter);
        }
    }

    void everySolverParameterReachesTheConfig() {
        for (const Field& f : fields()) {
            const ParameterInfo* info = findParameter(f.parameter);
            ParameterSet params;
            // A value inside the range that differs from the default.
            const double value = info->defaultValue == info->maxValue ? info->minValue : info->maxValue;
            params.set(f.parameter, value);
            const double seen = f.read(SphSolver::configFrom(params));
            QVERIFY2(same(seen, value),
                     qPrintable(QString("%1 = %2 arrived as %3").arg(f.parameter).arg(value).arg(seen)));
        }
    }
};

QTEST_APPLESS_MAIN(TestSolverParameters)
#include "test_solver_parameters.moc"
