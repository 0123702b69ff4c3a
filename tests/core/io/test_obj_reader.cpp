// OBJ reader: record forms, negative indices, polygon fans, clear errors, the Armadillo loads.
#include "io/ObjReader.h"

#include <QtTest>
#include <sstream>

using namespace octo;

namespace {
TriangleMesh parse(const std::string& text) {
    std::istringstream in(text);
    return parseObj(in, "test.obj");
}
std::string errorOf(const std::string& text) {
    try {
        parse(text);
    } catch (const FileFormatError& e) {
        return e.what();
    }
    return {};
}
} // namespace

class TestObjReader : public QObject {
    Q_OBJECT
private slots:
    void faceForms() {
        const TriangleMesh m = parse("# comment\n"
                                     "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                                     "vt 0 0\nvn 0 0 1\n"
                                     "f 1/1/1 2/1/1 3/1/1\n"
                                     "f 1//1 3//1 4//1\n"
                                     "f 1/1 2/1 3/1\n");
        QCOMPARE(m.vertices.size(), size_t(4));
        QCOMPARE(m.triangles.size(), size_t(3));
        QCOMPARE(m.triangles[1][2], 3u);
        QCOMPARE(m.vertices[2].x(), 1.0f);
    }
    void negativeIndicesAndPolygons() {
        const TriangleMesh m = parse("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 0.5 0\n"
                                     "f -5 -4 -3 -2 -1\n"); // pentagon -> 3-triangle fan
        QCOMPARE(m.triangles.size(), size_t(3));
        QCOMPARE(m.triangles[0][0], 0u);
        QCOMPARE(m.triangles[2][1], 3u);
        QCOMPARE(m.triangles[2][2], 4u);
    }
    void errorsAreClear() {
        const std::string missing = errorOf("v 0 0 0\nv 1 0 0\nf 1 2 3\n");
        QVERIFY2(missing.find("test.obj:3") != std::string::npos, missing.c_str());
        QVERIFY2(missing.find("missing vertex") != std::string::npos, missing.c_str());

        const std::string bad = errorOf("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n");
        QVERIFY2(bad.find("bad face index 'x'") != std::string::npos, bad.c_str());
        const std::string zero = errorOf("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n");
        QVERIFY2(zero.find("bad face index '0'") != std::string::npos, zero.c_str());
        const std::string neg = errorOf("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -4 1 2\n");
        QVERIFY2(neg.find("missing vertex") != std::string::npos, neg.c_str());

        const std::string coord = errorOf("v 0 zero 0\n");
        QVERIFY2(coord.find("bad vertex coordinate 'zero'") != std::string::npos, coord.c_str());
        const std::string shortV = errorOf("v 0 1\n");
        QVERIFY2(shortV.find("vertex needs 3 coordinates") != std::string::npos, shortV.c_str());
        const std::string shortF = errorOf("v 0 0 0\nv 1 0 0\nf 1 2\n");
        QVERIFY2(shortF.find("at least 3 vertices") != std::string::npos, shortF.c_str());

        const std::string empty = errorOf("");
        QVERIFY2(empty.find("empty OBJ") != std::string::npos, empty.c_str());
        const std::string noFaces = errorOf("v 0 0 0\n");
        QVERIFY2(noFaces.find("no faces") != std::string::npos, noFaces.c_str());

        try {
            readObj("/nonexistent/dir/file.obj");
            QFAIL("expected an error");
        } catch (const FileFormatError& e) {
            QVERIFY(std::string(e.what()).find("cannot open") != std::string::npos);
        }
    }
    void armadilloLoads() {
        const TriangleMesh m = readObj(std::string(OCTO_MESH_DIR) + "/armadillo.obj");
        QCOMPARE(m.vertices.size(), size_t(26002));
        QCOMPARE(m.triangles.size(), size_t(52000));
        const TriangleMesh low = readObj(std::string(OCTO_MESH_DIR) + "/armadillo_lowpoly.obj");
        QCOMPARE(low.vertices.size(), size_t(361));
        QCOMPARE(low.triangles.size(), size_t(718));
    }
};

QTEST_APPLESS_MAIN(TestObjReader)
#include "test_obj_reader.moc"
