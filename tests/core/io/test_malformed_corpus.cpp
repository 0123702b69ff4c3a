// The malformed-input corpus (tests/data/malformed/MANIFEST.tsv) against the io readers: every
// particle and OBJ file is refused with its one-line error, quickly and without allocating for
// the counts it declares (peak memory of the whole run stays far below what they ask for).
#include "MalformedCorpus.h"
#include "io/ObjReader.h"
#include "io/ParticleIo.h"

#include <QtTest>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace octo;
using namespace octo::test;

class TestMalformedCorpus : public QObject {
    Q_OBJECT
private:
    template <class Read> static std::string errorOf(Read read) {
        try {
            read();
        } catch (const FileFormatError& e) {
            return e.what();
        }
        return "(no error)";
    }

private slots:
    void corpusIsComplete() {
        // Every file in the folder is a case (a new file without a manifest line fails here).
        std::set<std::string> listed;
        for (const MalformedCase& c : malformedCases()) {
            QVERIFY2(std::filesystem::is_regular_file(c.file), c.file.c_str());
            listed.insert(std::filesystem::path(c.file).filename().string());
        }
        QVERIFY(listed.size() >= 30);
        for (const auto& e : std::filesystem::directory_iterator(malformedDir())) {
            const std::string name = e.path().filename().string();
            if (name == "MANIFEST.tsv" || name == "make_corpus.py")
                continue;
            QVERIFY2(listed.count(name), ("not in MANIFEST.tsv: " + name).c_str());
        }
    }

    void readersRefuseEveryFile() {
        int checked = 0;
        for (const MalformedCase& c : malformedCases()) {
            if (c.kind != "particles" && c.kind != "obj")
                continue;
            const auto t0 = std::chrono::steady_clock::now();
            const std::string error = c.kind == "particles" ? errorOf([&] { readParticles(c.file); })
                                                            : errorOf([&] { readObj(c.file); });
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const std::string missing = missingFrom(c, error);
            QVERIFY2(missing.empty(), missing.c_str());
            QVERIFY2(error.find('\n') == std::string::npos, error.c_str());
            QVERIFY2(seconds < 2.0, (c.file + " took " + std::to_string(seconds) + " s").c_str());
            ++checked;
        }
        QVERIFY(checked >= 20);
        // The files declare up to 1e11 values; honouring any one of them would take gigabytes.
        const long peak = peakRssKib();
        QVERIFY(peak > 0);
        QVERIFY2(peak < 512 * 1024, qPrintable(QString("peak RSS %1 KiB").arg(peak)));
    }

    void nonRegularAndMissingFilesAreRefused() {
        QVERIFY(errorOf([] { readParticles("/dev/zero"); }).find("not a regular file") != std::string::npos);
        QVERIFY(errorOf([] { readObj("/dev/zero"); }).find("not a regular file") != std::string::npos);
        QVERIFY(errorOf([] { readParticles(malformedDir()); }).find("not a regular file") !=
                std::string::npos);
        QVERIFY(errorOf([] { readObj(malformedDir() + "/nope.obj"); }).find("cannot open OBJ file") !=
                std::string::npos);
    }

    void oversizedObjIsRefusedBeforeReading() {
        // A sparse file: its size, not its (absent) content, decides.
        const std::string path = std::string(OCTO_TEST_OUTPUT_DIR) + "/huge_sparse.obj";
        {
            std::ofstream f(path, std::ios::binary);
            QVERIFY(f.good());
        }
        std::filesystem::resize_file(path, kMaxObjFileBytes + 1);
        const std::string error = errorOf([&] { readObj(path); });
        std::filesystem::remove(path);
        QVERIFY2(error.find("larger than the limit") != std::string::npos, error.c_str());
    }
    void asciiPlyBudgetIsCheckedBeforeAllocating() {
        // Issue 30: a 1 MB ASCII PLY with 1 000 properties over 500 k short lines reached 3.8 GB
        // before failing on its first line. The bytes per record are checked first.
        const std::string path = std::string(OCTO_TEST_OUTPUT_DIR) + "/ascii_1000_properties_1mb.ply";
        {
            std::ofstream f(path, std::ios::binary);
            f << "ply\nformat ascii 1.0\nelement vertex 500000\n";
            f << "property float x\nproperty float y\nproperty float z\n";
            for (int k = 0; k < 997; ++k)
                f << "property float p" << k << "\n";
            f << "end_header\n";
            for (int i = 0; i < 500000; ++i)
                f << "0\n";
        }
        const long before = peakRssKib();
        const std::string error = errorOf([&] { readParticles(path); });
        const long after = peakRssKib();
        std::filesystem::remove(path);
        QVERIFY2(error.find("header declares 500000 vertices of 1000 ASCII values") != std::string::npos &&
                     error.find("at least 2000 bytes each record") != std::string::npos,
                 error.c_str());
        QVERIFY2(after - before < 64 * 1024,
                 qPrintable(QString("peak RSS grew by %1 KiB").arg(after - before)));
        // The bound is exact: a valid file whose last value ends without a newline still reads.
        const std::string ok = std::string(OCTO_TEST_OUTPUT_DIR) + "/ascii_no_final_newline.ply";
        {
            std::ofstream f(ok, std::ios::binary);
            f << "ply\nformat ascii 1.0\nelement vertex 20000\nproperty float x\nproperty float y\n"
                 "property float z\nproperty float density\nend_header\n";
            for (int i = 0; i < 20000; ++i)
                f << "0 0 " << i % 10 << " 1" << (i + 1 < 20000 ? "\n" : "");
        }
        const ParticleData d = readParticles(ok);
        std::filesystem::remove(ok);
        QCOMPARE(d.positions.size(), size_t(20000));
    }

    void objTrianglesArePaidForByBytes() {
        // "f 1 2 3 2 3 ..." made a triangle per 2 bytes (150 MB -> 3.3 GB). A fan in a normal
        // polygon (an octagon) still reads.
        std::istringstream octagon("v 1 0 0\nv 0.7 0.7 0\nv 0 1 0\nv -0.7 0.7 0\nv -1 0 0\nv -0.7 -0.7 0\n"
                                   "v 0 -1 0\nv 0.7 -0.7 0\nf 1 2 3 4 5 6 7 8\n");
        QCOMPARE(parseObj(octagon, "octagon.obj").triangles.size(), size_t(6));
        std::string fan = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1";
        for (int k = 0; k < 100000; ++k)
            fan += " 2 3";
        std::istringstream in(fan + "\n");
        const std::string error = errorOf([&] { parseObj(in, "fan.obj"); });
        QVERIFY2(error.find("fan.obj:4: face of 200001 vertices brings the mesh to 199999 triangles") !=
                         std::string::npos &&
                     error.find("one triangle per 6 bytes") != std::string::npos,
                 error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestMalformedCorpus)
#include "test_malformed_corpus.moc"
