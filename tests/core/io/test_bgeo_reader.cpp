// partio / Houdini BGEO particle files (issue 28 item 6): a small writer here produces the files
// (big-endian V5 as partio writes them, raw and gzip-compressed), readParticles must give back
// the positions, velocities and float scalars, and malformed or oversized inputs are refused with
// a FileFormatError naming the file.
#include "io/BgeoReader.h"
#include "io/ParticleIo.h"

#include <QtTest>

#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace octo;

namespace {

struct Writer {
    std::string b;
    void u32(uint32_t v) {
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(char((v >> s) & 0xff));
    }
    void u16(uint16_t v) {
        b.push_back(char(v >> 8));
        b.push_back(char(v & 0xff));
    }
    void f32(float f) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        u32(u);
    }
    void name(const std::string& s) {
        u16(uint16_t(s.size()));
        b += s;
    }
};

// n points at (i, 2i, 3i) / 100 with velocity (i, -i, 0.5), density 1000 + i, an int id and an
// indexed-string attribute (skipped by the reader).
std::string bgeo(int n, int version = 5, int declaredPoints = -1) {
    Writer w;
    w.b = "Bgeo";
    w.b.push_back('V');
    w.u32(uint32_t(version));
    w.u32(uint32_t(declaredPoints < 0 ? n : declaredPoints)); // points
    w.u32(0);                                                 // primitives
    w.u32(0);                                                 // point groups
    w.u32(0);                                                 // primitive groups
    w.u32(4);                                                 // point attributes
    w.u32(0);                                                 // vertex attributes
    w.u32(0);                                                 // primitive attributes
    w.u32(0);                                                 // detail attributes
    w.name("id");
    w.u16(1);
    w.u32(1); // int
    w.u32(0);
    w.name("v");
    w.u16(3);
    w.u32(5); // vector
    for (int k = 0; k < 3; ++k)
        w.f32(0.0f);
    w.name("phase");
    w.u16(1);
    w.u32(4); // indexed string: no defaults, the string table
    w.u32(2);
    w.name("fluid");
    w.name("solid");
    w.name("density");
    w.u16(1);
    w.u32(0); // float
    w.f32(0.0f);
    for (int i = 0; i < n; ++i) {
        w.f32(float(i) / 100.0f);
        w.f32(float(2 * i) / 100.0f);
        w.f32(float(3 * i) / 100.0f);
        w.f32(1.0f);
        w.u32(uint32_t(i));
        w.f32(float(i));
        w.f32(-float(i));
        w.f32(0.5f);
        w.u32(uint32_t(i % 2));
        w.f32(1000.0f + float(i));
    }
    w.b += std::string("\0\xff", 2); // partio's "beginExtra" / end markers
    return w.b;
}

std::string gzip(const std::string& in) {
    z_stream z{};
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return {};
    std::string out(deflateBound(&z, uLong(in.size())) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

std::string writeFile(const std::string& name, const std::string& bytes) {
    const auto dir = std::filesystem::path(OCTO_TEST_OUTPUT_DIR) / "bgeo";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

void checkData(const ParticleData& d, int n) {
    QCOMPARE(d.positions.size(), size_t(n));
    QCOMPARE(d.velocities.size(), size_t(n));
    QVERIFY(d.scalars.count("density"));
    QVERIFY(!d.scalars.count("id"));    // int: skipped
    QVERIFY(!d.scalars.count("phase")); // string: skipped
    for (int i = 0; i < n; ++i) {
        QCOMPARE(d.positions[size_t(i)],
                 Vec3f(float(i) / 100.0f, float(2 * i) / 100.0f, float(3 * i) / 100.0f));
        QCOMPARE(d.velocities[size_t(i)], Vec3f(float(i), -float(i), 0.5f));
        QCOMPARE(d.scalars.at("density")[size_t(i)], 1000.0f + float(i));
    }
}

template <class F> QString errorOf(F&& f) {
    try {
        f();
    } catch (const FileFormatError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

} // namespace

class TestBgeoReader : public QObject {
    Q_OBJECT
private slots:
    void readsRawAndCompressed() {
        const std::string raw = bgeo(57);
        checkData(parseParticles(raw, "raw.bgeo"), 57);
        const std::string gz = gzip(raw);
        QVERIFY(gz.size() > 10 && gz.size() < raw.size());
        QVERIFY(looksLikeBgeo(gz) && looksLikeBgeo(raw));
        // SPlisHSPlasH names its compressed files .bgeo: the content decides, not the extension.
        checkData(readParticles(writeFile("frame_0001.bgeo", gz)), 57);
        checkData(readParticles(writeFile("frame_0002.bgeo.gz", gz)), 57);
        checkData(readParticles(writeFile("frame_0003.bgeo", raw)), 57);
        QCOMPARE(parseParticles(bgeo(0), "empty.bgeo").positions.size(), size_t(0));
    }

    void refusesMalformed() {
        // More points declared than the file holds: refused before allocating them.
        QString e = errorOf([] { parseParticles(bgeo(3, 5, 2000000000), "big.bgeo"); });
        QVERIFY2(e.startsWith("big.bgeo: ") && e.contains("points"), qPrintable(e));
        e = errorOf([] { parseParticles(bgeo(3, 4), "v4.bgeo"); });
        QVERIFY2(e.contains("version"), qPrintable(e));
        std::string cut = bgeo(10);
        cut.resize(cut.size() / 2);
        e = errorOf([&] { parseParticles(cut, "cut.bgeo"); });
        QVERIFY2(e.startsWith("cut.bgeo: "), qPrintable(e));
        std::string gzCut = gzip(bgeo(10));
        gzCut.resize(gzCut.size() / 2);
        e = errorOf([&] { parseParticles(gzCut, "cut.bgeo.gz"); });
        QVERIFY2(e.contains("truncated") || e.contains("gzip"), qPrintable(e));
        e = errorOf([] { parseParticles(gzip("hello, not a particle file"), "text.gz"); });
        QVERIFY2(e.contains("does not hold BGEO"), qPrintable(e));
        // A decompression bomb: 64 MiB of zeros in ~64 KiB of gzip is refused at 256x + 1 MiB.
        const std::string bomb = gzip(std::string(size_t(64) << 20, '\0'));
        QVERIFY(bomb.size() < (size_t(1) << 18));
        e = errorOf([&] { parseParticles(bomb, "bomb.bgeo"); });
        QVERIFY2(e.contains("decompression bomb"), qPrintable(e));
        // A NaN position is refused like in the other readers.
        std::string nan = bgeo(2);
        const size_t firstPoint = nan.size() - 2 - 2 * 40; // two records of 40 bytes, then the markers
        std::memset(nan.data() + firstPoint, 0x7f, 1);
        std::memset(nan.data() + firstPoint + 1, 0xc0, 1);
        e = errorOf([&] { parseParticles(nan, "nan.bgeo"); });
        QVERIFY2(e.contains("non-finite"), qPrintable(e));
    }
};

QTEST_APPLESS_MAIN(TestBgeoReader)
#include "test_bgeo_reader.moc"
