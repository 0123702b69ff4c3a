#include "io/BgeoReader.h"

#include "io/FileRead.h"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace octo {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw FileFormatError(path + ": " + what);
}

constexpr uint32_t kMagic = (uint32_t('B') << 24) | (uint32_t('g') << 16) | (uint32_t('e') << 8) | 'o';
constexpr uint64_t kRatio = 256; // decompressed <= kRatio x compressed + kSlack
constexpr uint64_t kSlack = uint64_t(1) << 20;

bool isGzip(const std::string& b) {
    return b.size() >= 2 && uint8_t(b[0]) == 0x1f && uint8_t(b[1]) == 0x8b;
}

// The whole gzip stream (concatenated members too), stopping with an error past the bound.
std::string gunzip(const std::string& in, const std::string& path) {
    const uint64_t limit = kRatio * uint64_t(in.size()) + kSlack;
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) // 32: gzip or zlib header, detected
        fail(path, "cannot initialise zlib");
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(std::min<size_t>(in.size(), std::numeric_limits<uInt>::max()));
    size_t fed = z.avail_in;
    int rc = Z_OK;
    while (true) {
        if (out.size() >= limit) {
            inflateEnd(&z);
            std::ostringstream s;
            s << "gzip data expands to more than " << byteText(limit) << " (" << kRatio
              << "x the file): refused as a decompression bomb";
            fail(path, s.str());
        }
        const size_t chunk =
            size_t(std::min<uint64_t>(limit - out.size(), std::max<size_t>(out.size(), 1 << 16)));
        const size_t at = out.size();
        out.resize(at + chunk);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + at);
        z.avail_out = uInt(std::min<size_t>(chunk, std::numeric_limits<uInt>::max()));
        const uInt before = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        out.resize(at + (before - z.avail_out));
        if (z.avail_in == 0 && fed < in.size()) { // inputs over 4 GiB: feed the rest
            const size_t more = std::min<size_t>(in.size() - fed, std::numeric_limits<uInt>::max());
            z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
            z.avail_in = uInt(more);
            fed += more;
        }
        if (rc == Z_STREAM_END) {
            if (z.avail_in == 0)
                break;
            inflateReset(&z); // another gzip member follows
            continue;
        }
        if (rc == Z_BUF_ERROR && z.avail_in == 0) {
            inflateEnd(&z);
            fail(path, "gzip data ends early (truncated file)");
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            inflateEnd(&z);
            fail(path, std::string("corrupt gzip data (") + (z.msg ? z.msg : "zlib error") + ")");
        }
    }
    inflateEnd(&z);
    return out;
}

// Big-endian reader over the decompressed bytes.
struct Cursor {
    const std::string& b;
    const std::string& path;
    size_t at = 0;
    size_t remaining() const { return b.size() - at; }
    void need(size_t n, const char* what) const {
        if (n > remaining())
            fail(path, std::string("file ends inside the ") + what);
    }
    uint32_t u32(const char* what) {
        need(4, what);
        const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at);
        at += 4;
        return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
    }
    uint16_t u16(const char* what) {
        need(2, what);
        const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at);
        at += 2;
        return uint16_t((p[0] << 8) | p[1]);
    }
    uint8_t u8(const char* what) {
        need(1, what);
        return uint8_t(b[at++]);
    }
    float f32(const char* what) {
        const uint32_t u = u32(what);
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    int32_t count(const char* what) {
        const auto v = int32_t(u32(what));
        if (v < 0) {
            std::ostringstream s;
            s << what << " is negative (" << v << ")";
            fail(path, s.str());
        }
        return v;
    }
    void skip(size_t n, const char* what) {
        need(n, what);
        at += n;
    }
};

struct Attribute {
    std::string name;
    uint16_t size = 0; // components
    int32_t type = 0;  // 0 float, 1 int, 4 indexed string, 5 vector
};

/// Checks magic and version, reads the counts; returns the point and point attribute counts.
std::pair<int32_t, int32_t> readHeader(Cursor& c, const std::string& path, bool zipped, size_t size) {
    if (size < 4 || c.u32("magic") != kMagic)
        fail(path, zipped ? "gzip-compressed file does not hold BGEO (no 'Bgeo' magic)"
                          : "not a BGEO file (no 'Bgeo' magic)");
    const uint8_t versionChar = c.u8("header");
    const int32_t version = int32_t(c.u32("header"));
    if (versionChar != 'V' || version != 5) {
        std::ostringstream s;
        s << "unsupported BGEO version " << char(versionChar) << version
          << " (expected V5, as partio writes)";
        fail(path, s.str());
    }
    const int32_t nPoints = c.count("point count");
    c.count("primitive count");
    c.count("point group count");
    c.count("primitive group count");
    const int32_t nPointAttrib = c.count("point attribute count");
    c.count("vertex attribute count");
    c.count("primitive attribute count");
    c.count("detail attribute count");
    return {nPoints, nPointAttrib};
}

/// Reads one point attribute definition; returns the bytes it adds to each point record.
uint64_t readAttribute(Cursor& c, const std::string& path, Attribute& a) {
    const uint16_t len = c.u16("attribute name");
    c.need(len, "attribute name");
    a.name.assign(c.b, c.at, len);
    c.at += len;
    a.size = c.u16("attribute size");
    a.type = int32_t(c.u32("attribute type"));
    if (a.type == 0 || a.type == 1 || a.type == 5) {
        c.skip(size_t(a.size) * 4, "attribute defaults");
    } else if (a.type == 4) { // indexed strings: the table (no defaults), then ints per point
        const int32_t strings = c.count("string count");
        if (uint64_t(strings) * 2 > c.remaining())
            fail(path, "string count of attribute '" + a.name + "' exceeds the file's size");
        for (int32_t k = 0; k < strings; ++k)
            c.skip(c.u16("string length"), "string");
    } else {
        std::ostringstream s;
        s << "attribute '" << a.name << "' has unsupported type " << a.type;
        fail(path, s.str());
    }
    return uint64_t(a.size) * 4;
}

/// Reads the attribute definitions and checks that nPoints records fit in what remains.
std::vector<Attribute> readAttributes(Cursor& c, const std::string& path, int32_t nPoints,
                                      int32_t nPointAttrib) {
    // Each attribute definition needs at least 8 bytes (name length, size, type).
    if (uint64_t(nPointAttrib) * 8 > c.remaining())
        fail(path, "point attribute count exceeds the file's size");
    std::vector<Attribute> attrs(static_cast<size_t>(nPointAttrib));
    uint64_t record = 16; // x y z w
    for (Attribute& a : attrs)
        record += readAttribute(c, path, a);
    if (uint64_t(nPoints) * record > c.remaining()) {
        std::ostringstream s;
        s << nPoints << " points of " << record << " bytes need more than the " << c.remaining()
          << " bytes that remain";
        fail(path, s.str());
    }
    return attrs;
}

/// Where each attribute goes: the velocity attribute, a scalar array, or nowhere (skipped).
struct Layout {
    int velocityAttr = -1;
    std::vector<std::vector<float>*> scalar;
};

Layout allocate(ParticleData& data, const std::vector<Attribute>& attrs, int32_t nPoints) {
    data.positions.resize(size_t(nPoints));
    Layout l;
    l.scalar.assign(attrs.size(), nullptr);
    for (size_t k = 0; k < attrs.size(); ++k) {
        const Attribute& a = attrs[k];
        const bool isFloat = a.type == 0 || a.type == 5;
        if (isFloat && a.size == 3 && l.velocityAttr < 0 &&
            (a.name == "v" || a.name == "vel" || a.name == "velocity" || a.name == "velocities")) {
            l.velocityAttr = int(k);
            data.velocities.resize(size_t(nPoints));
        } else if (isFloat && a.size == 1) {
            auto& s = data.scalars[a.name];
            s.resize(size_t(nPoints));
            l.scalar[k] = &s;
        }
    }
    return l;
}

void readPoints(Cursor& c, const std::vector<Attribute>& attrs, const Layout& l, int32_t nPoints,
                ParticleData& data) {
    for (int32_t i = 0; i < nPoints; ++i) {
        Vec3f p;
        for (int a = 0; a < 3; ++a)
            p[a] = c.f32("point data");
        c.f32("point data"); // homogeneous w: partio writes 1 and ignores it on reading
        data.positions[size_t(i)] = p;
        for (size_t k = 0; k < attrs.size(); ++k) {
            if (int(k) == l.velocityAttr) {
                for (int a = 0; a < 3; ++a)
                    data.velocities[size_t(i)][a] = c.f32("point data");
            } else if (l.scalar[k]) {
                (*l.scalar[k])[size_t(i)] = c.f32("point data");
            } else {
                c.skip(size_t(attrs[k].size) * 4, "point data");
            }
        }
    }
}

} // namespace

bool looksLikeBgeo(const std::string& bytes) {
    return isGzip(bytes) || (bytes.size() >= 4 && bytes.compare(0, 4, "Bgeo") == 0);
}

ParticleData parseBgeo(const std::string& bytes, const std::string& path) {
    const std::string unzipped = isGzip(bytes) ? gunzip(bytes, path) : std::string();
    const std::string& b = isGzip(bytes) ? unzipped : bytes;
    Cursor c{b, path};
    const auto [nPoints, nPointAttrib] = readHeader(c, path, isGzip(bytes), b.size());
    const std::vector<Attribute> attrs = readAttributes(c, path, nPoints, nPointAttrib);

    ParticleData data;
    const Layout l = allocate(data, attrs, nPoints);
    readPoints(c, attrs, l, nPoints, data);
    for (size_t i = 0; i < data.positions.size(); ++i)
        if (!data.positions[i].allFinite()) {
            std::ostringstream s;
            s << "particle " << i << " has a non-finite coordinate";
            fail(path, s.str());
        }
    return data;
}

} // namespace octo
