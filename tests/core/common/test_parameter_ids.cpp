// Typed parameter access (common/ParameterId.h): the enum and the table name the same parameters,
// and a value set by name reads back through its Param (and the other way round for a refused set).
#include "common/Parameters.h"

#include <QtTest>
#include <set>

using namespace octo;

class TestParameterIds : public QObject {
    Q_OBJECT
private slots:
    void enumAndTableNameTheSameParameters() {
        const auto& table = parameterTable();
        QCOMPARE(table.size(), kParameterCount);
        std::set<std::string> names;
        for (const ParameterInfo& p : table) {
            const Param id = parameterId(p.name);
            QCOMPARE(std::string(parameterName(id)), p.name);
            names.insert(p.name);
        }
        QCOMPARE(names.size(), kParameterCount);
        QVERIFY_THROWS_EXCEPTION(ParameterError, parameterId("noSuchParameter"));
    }

    void typedReadsFollowEverySet() {
        ParameterSet params;
        for (const ParameterInfo& p : parameterTable())
            QCOMPARE(params.get(parameterId(p.name)), p.defaultValue);
        params.set("cflFactor", 0.25);
        params.setFromString("pressureSolver", "dfsph");
        params.setFromString("kernel", "wendland");
        QCOMPARE(params.getf(Param::cflFactor), 0.25f);
        QCOMPARE(params.choice(Param::pressureSolver), std::string("dfsph"));
        QCOMPARE(params.choice(Param::kernel), std::string("wendland"));
        // A conflicting edit is undone in both views.
        params.set("maxIterations", 10);
        QVERIFY_THROWS_EXCEPTION(ParameterError, params.setConsistent("minIterations", 20));
        QCOMPARE(params.geti(Param::minIterations), int(params.get("minIterations")));
        QVERIFY(params.geti(Param::minIterations) != 20);
    }
};

QTEST_MAIN(TestParameterIds)
#include "test_parameter_ids.moc"
