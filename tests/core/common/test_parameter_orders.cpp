// Conflicting parameter pairs are refused in the table layer, naming both (issue 9): a batch is
// checked after all its assignments; a single edit (the GUI) that would conflict keeps the old value.
#include "common/Parameters.h"

#include <QtTest>

using namespace octo;

class TestParameterOrders : public QObject {
    Q_OBJECT
private slots:
    void everyPairIsInTheTable() {
        QVERIFY(parameterOrders().size() >= 3);
        for (const ParameterOrder& o : parameterOrders()) {
            QVERIFY2(findParameter(o.lower) && findParameter(o.upper), o.lower.c_str());
            const ParameterSet defaults;
            QVERIFY(defaults.get(o.lower) <= defaults.get(o.upper)); // the defaults are consistent
        }
    }

    void batchIsCheckedAfterAllAssignments() {
        ParameterSet p;
        p.parseAssignment("timeStepMin=0.008"); // above the default max 0.005 for a moment
        p.parseAssignment("timeStepMax=0.01");
        p.validate(); // consistent at the end: accepted
        p.parseAssignment("minIterations=20");
        p.parseAssignment("maxIterations=10");
        try {
            p.validate();
            QFAIL("minIterations > maxIterations must be refused");
        } catch (const ParameterError& e) {
            const QString m = e.what();
            QVERIFY2(m.contains("'minIterations' = 20") && m.contains("'maxIterations' = 10"), qPrintable(m));
        }
    }

    void singleEditKeepsTheOldValueOnConflict() {
        ParameterSet p;
        QVERIFY_THROWS_EXCEPTION(ParameterError, p.setConsistent("tLow", 5.0)); // default tHigh = 3.5
        QCOMPARE(p.get("tLow"), 0.4);
        p.setConsistent("tHigh", 6.0);
        p.setConsistent("tLow", 5.0);
        QCOMPARE(p.get("tLow"), 5.0);
    }

    void labelsNameTheSolversQuantities() {
        // The solver uses Monaghan's alpha and Akinci's sigma (ArtificialViscosity_Monaghan1992.h,
        // BoundaryFriction_Akinci2012.h); the keys stay.
        QVERIFY(QString::fromStdString(findParameter("viscosity")->label).contains("alpha"));
        QVERIFY(QString::fromStdString(findParameter("boundaryFriction")->label).contains("sigma"));
    }
};

QTEST_APPLESS_MAIN(TestParameterOrders)
#include "test_parameter_orders.moc"
