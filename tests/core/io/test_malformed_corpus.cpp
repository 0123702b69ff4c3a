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
};

QTEST_APPLESS_MAIN(TestMalformedCorpus)
#include "test_malformed_corpus.moc"
