// Mesh writers: OBJ and binary PLY keep the welded indexed mesh (and its normals; PLY also the
// vertex velocities and speeds).
#include "io/MeshWriter.h"

#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace octo;

namespace {
std::string outDir() {
    const char* env = std::getenv("OCTO_TEST_OUTPUT_DIR");
    std::string d = env ? env : OCTO_TEST_OUTPUT_DIR;
    d += "/mesh_io";
    std::filesystem::create_directories(d);
    return d;
}
TriangleMesh tetrahedron() {
    TriangleMesh m;
    m.vertices = {Vec3f(0, 0, 0), Vec3f(1, 0, 0), Vec3f(0, 1, 0), Vec3f(0, 0, 1)};
    m.triangles = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
    for (const Vec3f& v : m.vertices)
        m.normals.push_back((v - Vec3f::Constant(0.25f)).normalized());
    return m;
}
} // namespace

class TestMeshIo : public QObject {
    Q_OBJECT
private slots:
    void objKeepsIndices() {
        const std::string path = outDir() + "/tet.obj";
        const TriangleMesh m = tetrahedron();
        writeMesh(path, m);
        std::ifstream f(path);
        std::string line;
        std::vector<Vec3f> v;
        std::vector<std::array<uint32_t, 3>> faces;
        int normals = 0;
        while (std::getline(f, line)) {
            std::istringstream s(line);
            std::string kw;
            s >> kw;
            if (kw == "v") {
                Vec3f p;
                s >> p.x() >> p.y() >> p.z();
                v.push_back(p);
            } else if (kw == "vn")
                ++normals;
            else if (kw == "f") {
                std::array<uint32_t, 3> t;
                for (auto& i : t) {
                    std::string tok;
                    s >> tok;
                    i = uint32_t(std::stoul(tok.substr(0, tok.find('/')))) - 1;
                }
                faces.push_back(t);
            }
        }
        QVERIFY(v == m.vertices);
        QVERIFY(faces == m.triangles);
        QCOMPARE(normals, 4);
    }

    void binaryPlyLayout() {
        const std::string path = outDir() + "/tet.ply";
        const TriangleMesh m = tetrahedron();
        writeMesh(path, m);
        std::ifstream f(path, std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        const auto end = data.find("end_header\n");
        QVERIFY(end != std::string::npos);
        const std::string header = data.substr(0, end);
        QVERIFY(header.find("format binary_little_endian 1.0") != std::string::npos);
        QVERIFY(header.find("element vertex 4") != std::string::npos);
        QVERIFY(header.find("property float nx") != std::string::npos);
        QVERIFY(header.find("element face 4") != std::string::npos);
        const size_t body = data.size() - (end + 11);
        QCOMPARE(body, size_t(4 * 6 * 4 + 4 * 13));
        // Last face: count 3 then indices 1 2 3.
        const char* last = data.data() + data.size() - 13;
        QCOMPARE(int(last[0]), 3);
        uint32_t idx[3];
        std::memcpy(idx, last + 1, 12);
        QCOMPARE(idx[0], 1u);
        QCOMPARE(idx[2], 3u);
    }

    void plyVertexVelocities() {
        // A mesh with velocities gets float vx vy vz speed after the normals, in every vertex record.
        const std::string path = outDir() + "/tet_velocity.ply";
        TriangleMesh m = tetrahedron();
        for (size_t i = 0; i < m.vertices.size(); ++i)
            m.velocities.push_back(Vec3f(3.0f, 4.0f, 0.0f) * float(i + 1)); // speed 5 (i + 1)
        writeMesh(path, m);
        std::ifstream f(path, std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        const auto end = data.find("end_header\n");
        QVERIFY(end != std::string::npos);
        const std::string header = data.substr(0, end);
        const auto nz = header.find("property float nz"), vx = header.find("property float vx"),
                   speed = header.find("property float speed"), face = header.find("element face");
        QVERIFY(nz != std::string::npos && vx != std::string::npos && speed != std::string::npos);
        QVERIFY(nz < vx && vx < speed && speed < face);
        QCOMPARE(data.size() - (end + 11), size_t(4 * 10 * 4 + 4 * 13));
        for (size_t i = 0; i < 4; ++i) {
            float rec[10];
            std::memcpy(rec, data.data() + end + 11 + i * sizeof rec, sizeof rec);
            QCOMPARE(rec[6], 3.0f * float(i + 1));
            QCOMPARE(rec[7], 4.0f * float(i + 1));
            QCOMPARE(rec[8], 0.0f);
            QCOMPARE(rec[9], 5.0f * float(i + 1));
        }
        // Without velocities (or with a wrong count) the layout is the plain one.
        m.velocities.pop_back();
        writeMesh(path, m);
        std::ifstream g(path, std::ios::binary);
        const std::string plain((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
        QVERIFY(plain.find("speed") == std::string::npos);
    }

    void badPathsThrow() {
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, writeMesh(outDir() + "/tet.stl", tetrahedron()));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, writeMesh("/nonexistent-dir/x.obj", tetrahedron()));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, writeMesh("/nonexistent-dir/x.ply", tetrahedron()));
    }
};

QTEST_APPLESS_MAIN(TestMeshIo)
#include "test_mesh_io.moc"
