// Particle files: PLY (ascii, binary LE/BE) and legacy VTK (ASCII, BINARY) readers, the binary PLY
// writer, and clear errors for malformed input.
#include "io/ParticleIo.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace octo;

namespace {
std::string outDir() {
    const char* env = std::getenv("OCTO_TEST_OUTPUT_DIR");
    std::string d = env ? env : OCTO_TEST_OUTPUT_DIR;
    d += "/particle_io";
    std::filesystem::create_directories(d);
    return d;
}
std::string writeFile(const std::string& name, const std::string& content) {
    const std::string path = outDir() + "/" + name;
    std::ofstream f(path, std::ios::binary);
    f << content;
    return path;
}
std::string be32(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i)
        s[size_t(i)] = char((u >> (24 - 8 * i)) & 0xFF);
    return s;
}
std::string le32(float v) {
    std::string s(4, '\0');
    std::memcpy(s.data(), &v, 4);
    return s;
}
// Expects a FileFormatError whose message names the file and contains `what`.
void expectError(const std::string& path, const std::string& what) {
    try {
        readParticles(path);
        QFAIL(qPrintable(QString::fromStdString("no error for " + path)));
    } catch (const FileFormatError& e) {
        const std::string msg = e.what();
        QVERIFY2(msg.find(path) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find(what) != std::string::npos, msg.c_str());
    }
}
} // namespace

class TestParticleIo : public QObject {
    Q_OBJECT
private slots:
    void binaryPlyRoundTrip() {
        ParticleData d;
        for (int i = 0; i < 100; ++i) {
            d.positions.emplace_back(0.01f * i, -0.5f * i, 3.0f + i);
            d.velocities.emplace_back(1.0f, float(i), -2.0f);
            d.scalars["density"].push_back(1000.0f + i);
            d.scalars["pressure"].push_back(float(i * i));
        }
        const std::string path = outDir() + "/roundtrip.ply";
        writeParticlesPly(path, d);
        const ParticleData r = readParticles(path);
        QVERIFY(r.positions == d.positions);
        QVERIFY(r.velocities == d.velocities);
        QVERIFY(r.scalars == d.scalars);
    }

    void asciiPlyWithDoublesAndFaces() {
        const std::string path = writeFile(
            "ascii.ply", "ply\nformat ascii 1.0\ncomment test\nelement vertex 3\nproperty double x\n"
                         "property double y\nproperty double z\nproperty float density\n"
                         "property uchar red\nelement face 1\nproperty list uchar int vertex_indices\n"
                         "end_header\n0 0 0 1000 255\n1.5 2 3 999.5 0\n-1 -2 -3e-2 1001 7\n3 0 1 2\n");
        const ParticleData r = readParticles(path);
        QCOMPARE(r.positions.size(), size_t(3));
        QCOMPARE(r.positions[2], Vec3f(-1.0f, -2.0f, -0.03f));
        QVERIFY(r.velocities.empty());
        QCOMPARE(r.scalars.count("density"), size_t(1));
        QCOMPARE(r.scalars.at("density")[1], 999.5f);
        QCOMPARE(r.scalars.count("red"), size_t(0)); // integer colour: not a float-like scalar
    }

    void bigEndianPly() {
        std::string body;
        for (float v : {1.0f, 2.0f, 3.0f, -4.0f, 5.5f, 6.0f})
            body += be32(v);
        const std::string path =
            writeFile("be.ply", "ply\nformat binary_big_endian 1.0\nelement vertex 2\nproperty float x\n"
                                "property float y\nproperty float z\nend_header\n" +
                                    body);
        const ParticleData r = readParticles(path);
        QCOMPARE(r.positions.size(), size_t(2));
        QCOMPARE(r.positions[1], Vec3f(-4.0f, 5.5f, 6.0f));
    }

    void vtkAsciiPolydata() {
        const std::string path = writeFile(
            "ascii.vtk", "# vtk DataFile Version 3.0\nparticles\nASCII\nDATASET POLYDATA\n"
                         "POINTS 3 float\n0 0 0 1 0 0\n0 1 0\nVERTICES 3 6\n1 0\n1 1\n1 2\n"
                         "POINT_DATA 3\nSCALARS density float 1\nLOOKUP_TABLE default\n1000 1001 1002\n"
                         "VECTORS velocity float\n1 2 3 4 5 6 7 8 9\n");
        const ParticleData r = readParticles(path);
        QCOMPARE(r.positions.size(), size_t(3));
        QCOMPARE(r.positions[1], Vec3f(1.0f, 0.0f, 0.0f));
        QCOMPARE(r.scalars.at("density")[2], 1002.0f);
        QCOMPARE(r.velocities.size(), size_t(3));
        QCOMPARE(r.velocities[2], Vec3f(7.0f, 8.0f, 9.0f));
    }

    void vtkBinaryUnstructuredGrid() {
        std::string pts;
        for (float v : {0.5f, 0.25f, -1.0f, 2.0f, 3.0f, 4.0f})
            pts += be32(v);
        const std::string path = writeFile("binary.vtk", "# vtk DataFile Version 3.0\nparticles\nBINARY\n"
                                                         "DATASET UNSTRUCTURED_GRID\nPOINTS 2 float\n" +
                                                             pts + "\n");
        const ParticleData r = readParticles(path);
        QCOMPARE(r.positions.size(), size_t(2));
        QCOMPARE(r.positions[0], Vec3f(0.5f, 0.25f, -1.0f));
        QCOMPARE(r.positions[1], Vec3f(2.0f, 3.0f, 4.0f));
    }

    // Found by libFuzzer (fuzz_ply): a binary element before the vertex element with a list beyond
    // the vertex's property count wrote past the vertex value buffer. It is a valid file.
    void binaryPlyLongFaceElementBeforeVertices() {
        std::string body; // face: 4 floats and a list of 2 ints, then 2 vertices of 3 floats
        for (float v : {0.0f, 0.0f, 0.0f, 0.0f})
            body += le32(v);
        body += char(2) + std::string(8, '\0');
        for (float v : {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f})
            body += le32(v);
        const std::string path = writeFile(
            "face_first.ply", "ply\nformat binary_little_endian 1.0\nelement face 1\nproperty float a\n"
                              "property float b\nproperty float c\nproperty float d\n"
                              "property list uchar int vertex_indices\nelement vertex 2\nproperty float x\n"
                              "property float y\nproperty float z\nend_header\n" +
                                  body);
        const ParticleData r = readParticles(path);
        QCOMPARE(r.positions.size(), size_t(2));
        QCOMPARE(r.positions[1], Vec3f(4.0f, 5.0f, 6.0f));
    }

    // Found by libFuzzer (fuzz_vtk): arrays sized by one POINTS section and kept past a second one,
    // or read before POINTS, gave scalars of another length than the positions.
    void vtkPointDataMustFollowOnePointsSection() {
        const std::string head = "# vtk DataFile Version 3.0\nx\nASCII\nDATASET POLYDATA\n";
        expectError(writeFile("two_points.vtk", head +
                                                    "POINTS 1 float\n0 0 0\nPOINT_DATA 1\nSCALARS d float\n"
                                                    "LOOKUP_TABLE default\n1\nPOINTS 2 float\n0 0 0 1 1 1\n"),
                    "second POINTS section");
        expectError(writeFile("scalars_first.vtk", head + "SCALARS d float\nLOOKUP_TABLE default\n"
                                                          "POINTS 1 float\n0 0 0\n"),
                    "SCALARS d before POINTS");
        // Dataset-level field data (e.g. TIME) before POINTS is legal and ignored.
        const ParticleData r = readParticles(
            writeFile("field_first.vtk",
                      head + "FIELD FieldData 1\nTIME 1 1 double\n0.5\nPOINTS 2 float\n0 0 0 1 1 1\n"));
        QCOMPARE(r.positions.size(), size_t(2));
        QVERIFY(r.scalars.empty());
    }

    void malformedFilesGiveClearErrors() {
        const std::string header =
            "ply\nformat binary_little_endian 1.0\nelement vertex 4\nproperty float x\n"
            "property float y\nproperty float z\nend_header\n";
        std::string twoVertices;
        for (int i = 0; i < 6; ++i)
            twoVertices += le32(float(i));
        expectError(writeFile("empty.ply", ""), "empty file");
        expectError(outDir() + "/does_not_exist.ply", "cannot open");
        expectError(writeFile("truncated.ply", header + twoVertices), "truncated");
        expectError(
            writeFile("noheaderend.ply", "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\n"),
            "end_header");
        expectError(writeFile("fewlines.ply",
                              "ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nproperty float y\n"
                              "property float z\nend_header\n0 0 0\n1 1 1\n"),
                    "5 vertices");
        expectError(writeFile("fewvalues.ply",
                              "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                              "property float z\nend_header\n0 0 0\n1 1\n"),
                    "vertex 1 has 2 values");
        expectError(writeFile("nan.ply",
                              "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                              "property float z\nend_header\n0 0 0\n1 nan 1\n"),
                    "non-finite");
        std::string nanBody =
            le32(0) + le32(0) + le32(0) + le32(std::numeric_limits<float>::infinity()) + le32(0) + le32(0);
        expectError(
            writeFile("inf.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 2\nproperty float x\n"
                                 "property float y\nproperty float z\nend_header\n" +
                                     nanBody),
            "particle 1 has a non-finite");
        expectError(writeFile("noxyz.ply",
                              "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\n0\n"),
                    "x, y or z");
        expectError(writeFile("unknown.xyz", "0 0 0\n1 1 1\n"), "unknown particle file format");
        expectError(writeFile("badformat.ply",
                              "ply\nformat binary_middle_endian 1.0\nelement vertex 0\nend_header\n"),
                    "format");
        expectError(
            writeFile(
                "truncated.vtk",
                "# vtk DataFile Version 3.0\nx\nASCII\nDATASET POLYDATA\nPOINTS 4 float\n0 0 0 1 1 1\n"),
            "truncated");
        expectError(writeFile("truncatedbin.vtk",
                              "# vtk DataFile Version 3.0\nx\nBINARY\nDATASET POLYDATA\nPOINTS 4 float\n" +
                                  be32(1) + be32(2)),
                    "truncated");
        expectError(writeFile("count.vtk",
                              "# vtk DataFile Version 3.0\nx\nASCII\nDATASET POLYDATA\nPOINTS 3 float\n"
                              "0 0 0 1 1 1\nPOINT_DATA 2\nSCALARS d float\nLOOKUP_TABLE default\n1 2\n"),
                    "expected 9 values");
        expectError(writeFile("pdcount.vtk",
                              "# vtk DataFile Version 3.0\nx\nASCII\nDATASET POLYDATA\nPOINTS 1 float\n"
                              "0 0 0\nPOINT_DATA 2\n"),
                    "POINT_DATA has 2 values for 1 points");
        expectError(
            writeFile("nan.vtk",
                      "# vtk DataFile Version 3.0\nx\nASCII\nDATASET POLYDATA\nPOINTS 1 float\nnan 0 0\n"),
            "non-finite");
        expectError(
            writeFile("grid.vtk", "# vtk DataFile Version 3.0\nx\nASCII\nDATASET STRUCTURED_POINTS\n"),
            "not supported");
        expectError(writeFile("nopoints.vtk", "# vtk DataFile Version 3.0\nx\nASCII\nDATASET POLYDATA\n"),
                    "no POINTS");
        // A huge declared count must fail cleanly, not allocate.
        expectError(
            writeFile("huge.ply",
                      "ply\nformat binary_little_endian 1.0\nelement vertex 4000000000\nproperty float x\n"
                      "property float y\nproperty float z\nend_header\n" +
                          twoVertices),
            "truncated");
    }
};

QTEST_APPLESS_MAIN(TestParticleIo)
#include "test_particle_io.moc"
