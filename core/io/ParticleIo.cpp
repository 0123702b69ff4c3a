// Particle file readers (PLY ascii/binary, legacy VTK ascii/binary) and the binary PLY writer.
#include "io/ParticleIo.h"

#include "io/BgeoReader.h"
#include "io/FileRead.h"
#include "io/PlyWriter.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace octo {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw FileFormatError(path + ": " + what);
}

// Particle files are held in memory once; the limit only keeps a typo'd path to a disk image
// from being read. The real bound is that every count is checked against the bytes that remain.
constexpr uint64_t kMaxParticleFileBytes = uint64_t(64) << 30;

std::string readAll(const std::string& path) {
    std::string data = readRegularFile(path, kMaxParticleFileBytes, "particle file");
    if (data.empty())
        fail(path, "empty file");
    return data;
}

/// a * b, or fail naming `what` when the product does not fit in size_t.
size_t checkedProduct(const std::string& path, size_t a, size_t b, const char* what) {
    if (b != 0 && a > std::numeric_limits<size_t>::max() / b) {
        std::ostringstream s;
        s << what << ": size " << a << " x " << b << " is too large";
        fail(path, s.str());
    }
    return a * b;
}

// ---------------------------------------------------------------- scalar types
enum class Scalar { I8, U8, I16, U16, I32, U32, F32, F64, Invalid };

Scalar scalarOf(const std::string& t) {
    if (t == "char" || t == "int8")
        return Scalar::I8;
    if (t == "uchar" || t == "uint8")
        return Scalar::U8;
    if (t == "short" || t == "int16")
        return Scalar::I16;
    if (t == "ushort" || t == "uint16")
        return Scalar::U16;
    if (t == "int" || t == "int32")
        return Scalar::I32;
    if (t == "uint" || t == "uint32")
        return Scalar::U32;
    if (t == "float" || t == "float32")
        return Scalar::F32;
    if (t == "double" || t == "float64")
        return Scalar::F64;
    return Scalar::Invalid;
}
size_t sizeOf(Scalar s) {
    switch (s) {
    case Scalar::I8:
    case Scalar::U8:
        return 1;
    case Scalar::I16:
    case Scalar::U16:
        return 2;
    case Scalar::I32:
    case Scalar::U32:
    case Scalar::F32:
        return 4;
    case Scalar::F64:
        return 8;
    default:
        return 0;
    }
}
bool floatLike(Scalar s) {
    return s == Scalar::F32 || s == Scalar::F64;
}

double decode(const unsigned char* p, Scalar s, bool bigEndian) {
    unsigned char b[8];
    const size_t n = sizeOf(s);
    std::memcpy(b, p, n);
    if (bigEndian != (std::endian::native == std::endian::big))
        std::reverse(b, b + n);
    switch (s) {
    case Scalar::I8:
        return double(int8_t(b[0]));
    case Scalar::U8:
        return double(b[0]);
    case Scalar::I16: {
        int16_t v;
        std::memcpy(&v, b, 2);
        return v;
    }
    case Scalar::U16: {
        uint16_t v;
        std::memcpy(&v, b, 2);
        return v;
    }
    case Scalar::I32: {
        int32_t v;
        std::memcpy(&v, b, 4);
        return v;
    }
    case Scalar::U32: {
        uint32_t v;
        std::memcpy(&v, b, 4);
        return v;
    }
    case Scalar::F32: {
        float v;
        std::memcpy(&v, b, 4);
        return v;
    }
    case Scalar::F64: {
        double v;
        std::memcpy(&v, b, 8);
        return v;
    }
    default:
        return 0.0;
    }
}

// Particle properties by name -> where they go.
struct Sink {
    ParticleData& data;
    std::vector<std::string> scalarNames;
    void begin(const std::vector<std::string>& names, const std::vector<bool>& keep, size_t n) {
        data.positions.assign(n, Vec3f::Zero());
        const bool vel = std::count(names.begin(), names.end(), "vx") &&
                         std::count(names.begin(), names.end(), "vy") &&
                         std::count(names.begin(), names.end(), "vz");
        if (vel)
            data.velocities.assign(n, Vec3f::Zero());
        for (size_t k = 0; k < names.size(); ++k)
            if (keep[k])
                data.scalars[names[k]].assign(n, 0.0f);
    }
};

void checkPositions(const std::string& path, const ParticleData& d) {
    for (size_t i = 0; i < d.positions.size(); ++i)
        if (!d.positions[i].allFinite()) {
            std::ostringstream s;
            s << "particle " << i << " has a non-finite coordinate (" << d.positions[i].x() << ", "
              << d.positions[i].y() << ", " << d.positions[i].z() << ")";
            fail(path, s.str());
        }
    // Densities give each particle its volume m / rho: 0, negative or NaN made every particle a
    // "surface" particle without a word.
    if (const auto it = d.scalars.find("density"); it != d.scalars.end())
        for (size_t i = 0; i < it->second.size(); ++i)
            if (!(it->second[i] > 0.0f) || !std::isfinite(it->second[i])) {
                std::ostringstream s;
                s << "particle " << i << ": field 'density' = " << it->second[i]
                  << " (must be finite and > 0 kg/m^3)";
                fail(path, s.str());
            }
}

// ---------------------------------------------------------------- PLY
struct PlyProperty {
    std::string name;
    Scalar type = Scalar::Invalid;
    bool list = false;
    Scalar countType = Scalar::Invalid;
};
struct PlyElement {
    std::string name;
    size_t count = 0;
    std::vector<PlyProperty> props;
};

// Line reader over a PLY buffer; `pos` is where the next line (or the binary body) starts.
struct PlyCursor {
    const std::string& buf;
    size_t pos = 0;
    bool nextLine(std::string& line) {
        if (pos >= buf.size())
            return false;
        size_t e = buf.find('\n', pos);
        if (e == std::string::npos)
            e = buf.size();
        line = buf.substr(pos, e - pos);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        pos = e + 1;
        return true;
    }
};

struct PlyHeader {
    std::string format;
    std::vector<PlyElement> elements;
};

PlyElement parsePlyElement(const std::string& path, const std::string& line, std::istringstream& ls) {
    PlyElement e;
    long long count = -1;
    ls >> e.name >> count;
    if (!ls || count < 0)
        fail(path, "bad PLY element line '" + line + "'");
    e.count = size_t(count);
    return e;
}

void addPlyProperty(const std::string& path, const std::string& line, std::istringstream& ls,
                    std::vector<PlyElement>& elements) {
    if (elements.empty())
        fail(path, "PLY property before any element");
    PlyProperty p;
    std::string t;
    ls >> t;
    if (t == "list") {
        std::string ct, it;
        ls >> ct >> it >> p.name;
        p.list = true;
        p.countType = scalarOf(ct);
        p.type = scalarOf(it);
        if (p.countType == Scalar::Invalid || p.type == Scalar::Invalid)
            fail(path, "bad PLY list property '" + line + "'");
    } else {
        ls >> p.name;
        p.type = scalarOf(t);
        if (p.type == Scalar::Invalid)
            fail(path, "unknown PLY property type '" + t + "'");
    }
    for (const PlyProperty& q : elements.back().props)
        if (q.name == p.name) // "last wins" would silently drop a column
            fail(path, "PLY element '" + elements.back().name + "' declares property '" + p.name + "' twice");
    elements.back().props.push_back(p);
}

/// Reads the header up to end_header, leaving the cursor at the first record.
PlyHeader readPlyHeader(const std::string& path, PlyCursor& c) {
    PlyHeader h;
    std::string line;
    bool ended = false;
    c.nextLine(line); // "ply"
    while (c.nextLine(line)) {
        std::istringstream ls(line);
        std::string kw;
        ls >> kw;
        if (kw == "format")
            ls >> h.format;
        else if (kw == "element")
            h.elements.push_back(parsePlyElement(path, line, ls));
        else if (kw == "property")
            addPlyProperty(path, line, ls, h.elements);
        else if (kw == "end_header") {
            ended = true;
            break;
        } else if (kw == "comment" || kw == "obj_info" || kw.empty()) {
        } else
            fail(path, "unexpected PLY header line '" + line + "'");
    }
    if (!ended)
        fail(path, "PLY header has no end_header (truncated file?)");
    return h;
}

/// Which vertex property is which: positions, velocities and the scalars that are kept.
struct PlyVertexLayout {
    int ix = -1, iy = -1, iz = -1, ivx = -1, ivy = -1, ivz = -1;
    std::vector<std::string> names;
    std::vector<bool> keep;
    bool vel = false;
};

PlyVertexLayout plyVertexLayout(const std::string& path, const PlyElement& vertex) {
    PlyVertexLayout l;
    for (size_t k = 0; k < vertex.props.size(); ++k) {
        const auto& p = vertex.props[k];
        l.names.push_back(p.name);
        const int ki = int(k);
        if (p.name == "x")
            l.ix = ki;
        else if (p.name == "y")
            l.iy = ki;
        else if (p.name == "z")
            l.iz = ki;
        else if (p.name == "vx")
            l.ivx = ki;
        else if (p.name == "vy")
            l.ivy = ki;
        else if (p.name == "vz")
            l.ivz = ki;
        l.keep.push_back(!p.list && floatLike(p.type) && ki != l.ix && ki != l.iy && ki != l.iz &&
                         ki != l.ivx && ki != l.ivy && ki != l.ivz);
    }
    if (l.ix < 0 || l.iy < 0 || l.iz < 0)
        fail(path, "PLY vertex element lacks x, y or z");
    for (int k : {l.ix, l.iy, l.iz, l.ivx, l.ivy, l.ivz})
        if (k >= 0 && vertex.props[size_t(k)].list)
            fail(path,
                 "PLY vertex property '" + vertex.props[size_t(k)].name + "' is a list, expected a number");
    l.vel = l.ivx >= 0 && l.ivy >= 0 && l.ivz >= 0;
    return l;
}

void storePlyVertex(ParticleData& data, const PlyVertexLayout& l, const std::vector<double>& values,
                    size_t i) {
    data.positions[i] =
        Vec3f(float(values[size_t(l.ix)]), float(values[size_t(l.iy)]), float(values[size_t(l.iz)]));
    if (l.vel)
        data.velocities[i] =
            Vec3f(float(values[size_t(l.ivx)]), float(values[size_t(l.ivy)]), float(values[size_t(l.ivz)]));
    for (size_t k = 0; k < l.names.size(); ++k)
        if (l.keep[k])
            data.scalars[l.names[k]][i] = float(values[k]);
}

/// Fails unless the lines and bytes after `pos` can hold n ASCII vertex records of element e.
void checkPlyAsciiRoom(const std::string& path, const std::string& buf, size_t pos, size_t n,
                       const PlyElement& e) {
    // Lines must exist before we allocate: a bogus count must not exhaust memory.
    const size_t rest = buf.size() - std::min(buf.size(), pos);
    const size_t remainingLines =
        size_t(std::count(buf.begin() + std::ptrdiff_t(buf.size() - rest), buf.end(), '\n')) +
        ((rest > 0 && buf.back() != '\n') ? 1 : 0);
    if (n > remainingLines) {
        std::ostringstream s;
        s << "header declares " << n << " vertices but the file has only " << remainingLines << " more lines";
        fail(path, s.str());
    }
    // Every value takes at least 2 bytes (a digit and a separator; the file's last
    // value may end without one): n records of P values need 2 n P - 1 bytes. Checked
    // before the P arrays of n floats are allocated (1 000 properties over 500 k short
    // lines reached 3.8 GB before the first line). Small headers (up to 64 k values)
    // are left to the line-by-line messages.
    const size_t perRecord = 2 * std::max<size_t>(1, e.props.size());
    if (n > (size_t(1) << 16) / perRecord && n > (rest + 1) / perRecord) {
        std::ostringstream s;
        s << "header declares " << n << " vertices of " << e.props.size() << " ASCII values (at least "
          << perRecord << " bytes each record) but only " << rest << " bytes follow";
        fail(path, s.str());
    }
}

/// Parses ASCII vertex record i (one line) into values.
void parsePlyAsciiVertex(const std::string& path, const std::string& line, const PlyElement& e, size_t i,
                         std::vector<double>& values) {
    std::istringstream ls(line);
    for (size_t k = 0; k < e.props.size(); ++k) {
        std::string tok;
        if (!(ls >> tok)) {
            std::ostringstream s;
            s << "vertex " << i << " has " << k << " values, expected " << e.props.size();
            fail(path, s.str());
        }
        if (e.props[k].list)
            fail(path, "list properties in the vertex element are not supported");
        char* end = nullptr;
        values[k] = std::strtod(tok.c_str(), &end);
        if (*end != '\0')
            fail(path, "vertex " + std::to_string(i) + ": cannot read number '" + tok + "'");
    }
    std::string extra;
    if (ls >> extra) {
        std::ostringstream s;
        s << "vertex " << i << " has more than " << e.props.size() << " values";
        fail(path, s.str());
    }
}

void readPlyAscii(const std::string& path, PlyCursor& c, const PlyHeader& h, const PlyElement& vertex,
                  const PlyVertexLayout& l, std::vector<double>& values, ParticleData& data) {
    std::string line;
    for (const PlyElement& e : h.elements) {
        const bool isVertex = &e == &vertex;
        if (isVertex) {
            checkPlyAsciiRoom(path, c.buf, c.pos, vertex.count, e);
            Sink{data, {}}.begin(l.names, l.keep, vertex.count);
        }
        for (size_t i = 0; i < e.count; ++i) {
            if (!c.nextLine(line)) {
                std::ostringstream s;
                s << "file ends after " << i << " of " << e.count << " " << e.name << " records";
                fail(path, s.str());
            }
            if (!isVertex)
                continue;
            parsePlyAsciiVertex(path, line, e, i, values);
            storePlyVertex(data, l, values, i);
        }
        if (isVertex)
            break;
    }
}

// Binary PLY records; every read is checked against the bytes that remain.
struct PlyBinaryReader {
    const std::string& path;
    const std::string& buf;
    size_t& pos;
    bool big;

    size_t remaining() const { return buf.size() - std::min(buf.size(), pos); }
    const unsigned char* at() const { return reinterpret_cast<const unsigned char*>(buf.data()) + pos; }
    // Never computes pos + k (which could wrap): compares k with what is left.
    void need(size_t k, const PlyElement& e, size_t i) const {
        if (k > remaining()) {
            std::ostringstream s;
            s << "truncated: file ends in " << e.name << " record " << i << " of " << e.count;
            fail(path, s.str());
        }
    }
    /// Fails unless the bytes left can hold e.count records of the smallest size.
    void checkRoom(const PlyElement& e) const {
        // Smallest record: fixed properties plus the count of every list (lists may be empty).
        size_t minRecord = 0;
        bool fixed = true;
        for (const auto& p : e.props) {
            fixed &= !p.list;
            minRecord += p.list ? sizeOf(p.countType) : sizeOf(p.type);
        }
        if (e.count > remaining() / minRecord) {
            std::ostringstream s;
            s << "truncated: header declares " << e.count << " " << e.name << " records of "
              << (fixed ? "" : "at least ") << minRecord << " bytes but only " << remaining()
              << " bytes follow";
            fail(path, s.str());
        }
    }
    void skipList(const PlyProperty& p, const PlyElement& e, size_t i) {
        need(sizeOf(p.countType), e, i);
        const double c = decode(at(), p.countType, big);
        pos += sizeOf(p.countType);
        // A float count (list double uchar) may be negative, fractional, 1e30 or
        // NaN: check it as a double before it becomes an integer.
        const double itemBytes = double(sizeOf(p.type));
        if (!(c >= 0.0) || c != std::floor(c) || c * itemBytes > double(remaining())) {
            std::ostringstream s;
            s << e.name << " record " << i << ": list '" << p.name << "' declares " << c << " items but only "
              << remaining() << " bytes follow";
            fail(path, s.str());
        }
        const size_t skip = size_t(c) * sizeOf(p.type);
        need(skip, e, i);
        pos += skip;
    }
    /// Reads record i of e; only the vertex element's values are kept.
    void record(const PlyElement& e, size_t i, bool isVertex, std::vector<double>& values) {
        for (size_t k = 0; k < e.props.size(); ++k) {
            const auto& p = e.props[k];
            if (p.list) {
                skipList(p, e, i);
                if (isVertex) // other elements may have more properties than `values`
                    values[k] = 0.0;
            } else {
                need(sizeOf(p.type), e, i);
                if (isVertex)
                    values[k] = decode(at(), p.type, big);
                pos += sizeOf(p.type);
            }
        }
    }
};

void readPlyBinary(const std::string& path, PlyCursor& c, bool big, const PlyHeader& h,
                   const PlyElement& vertex, const PlyVertexLayout& l, std::vector<double>& values,
                   ParticleData& data) {
    PlyBinaryReader r{path, c.buf, c.pos, big};
    for (const PlyElement& e : h.elements) {
        const bool isVertex = &e == &vertex;
        if (e.props.empty())
            continue; // no bytes per record, nothing to read
        r.checkRoom(e);
        if (isVertex)
            Sink{data, {}}.begin(l.names, l.keep, vertex.count);
        for (size_t i = 0; i < e.count; ++i) {
            r.record(e, i, isVertex, values);
            if (isVertex)
                storePlyVertex(data, l, values, i);
        }
        if (isVertex)
            break;
    }
}

ParticleData readPly(const std::string& path, const std::string& buf) {
    PlyCursor c{buf};
    const PlyHeader h = readPlyHeader(path, c);
    const bool ascii = h.format == "ascii";
    const bool big = h.format == "binary_big_endian";
    if (!ascii && !big && h.format != "binary_little_endian")
        fail(path, "unknown PLY format '" + h.format + "'");
    auto vit = std::find_if(h.elements.begin(), h.elements.end(),
                            [](const PlyElement& e) { return e.name == "vertex"; });
    if (vit == h.elements.end())
        fail(path, "PLY file has no vertex element");
    const PlyElement& vertex = *vit;
    const PlyVertexLayout l = plyVertexLayout(path, vertex);

    ParticleData data;
    std::vector<double> values(vertex.props.size());
    if (ascii)
        readPlyAscii(path, c, h, vertex, l, values, data);
    else
        readPlyBinary(path, c, big, h, vertex, l, values, data);
    checkPositions(path, data);
    return data;
}

// ---------------------------------------------------------------- legacy VTK
struct VtkCursor {
    const std::string& path;
    const std::string& buf;
    size_t pos = 0;
    bool token(std::string& out) {
        while (pos < buf.size() && std::isspace(static_cast<unsigned char>(buf[pos])))
            ++pos;
        if (pos >= buf.size())
            return false;
        const size_t b = pos;
        while (pos < buf.size() && !std::isspace(static_cast<unsigned char>(buf[pos])))
            ++pos;
        out = buf.substr(b, pos - b);
        return true;
    }
    std::string line() {
        size_t e = buf.find('\n', pos);
        if (e == std::string::npos)
            e = buf.size();
        std::string l = buf.substr(pos, e - pos);
        if (!l.empty() && l.back() == '\r')
            l.pop_back();
        pos = std::min(buf.size(), e + 1);
        return l;
    }
    std::string expectToken(const char* what) {
        std::string t;
        if (!token(t))
            fail(path, std::string("truncated: expected ") + what);
        return t;
    }
    size_t count(const char* what) {
        const std::string t = expectToken(what);
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(t.c_str(), &end, 10);
        if (*end != '\0' || v < 0 || errno == ERANGE)
            fail(path, std::string("bad ") + what + " '" + t + "' (expected a whole number >= 0)");
        return size_t(v);
    }
    // Reads n numbers (ASCII text or big-endian binary) into out.
    // The count is checked against the bytes that remain before `out` grows: a binary value
    // takes sizeOf(type) bytes, an ASCII value at least 2 (a digit and a separator).
    void numbers(size_t n, Scalar type, bool binary, std::vector<double>& out, const char* what) {
        if (binary) {
            // The binary block starts after the end of the keyword line.
            while (pos < buf.size() && buf[pos] != '\n')
                ++pos;
            ++pos;
            const size_t rest = pos > buf.size() ? 0 : buf.size() - pos;
            if (n > rest / sizeOf(type)) {
                std::ostringstream s;
                s << "truncated: " << what << " declares " << n << " values of " << sizeOf(type)
                  << " bytes, but only " << rest << " bytes follow";
                fail(path, s.str());
            }
            const size_t bytes = n * sizeOf(type);
            out.resize(n);
            const auto* b = reinterpret_cast<const unsigned char*>(buf.data()) + pos;
            for (size_t i = 0; i < n; ++i)
                out[i] = decode(b + i * sizeOf(type), type, true);
            pos += bytes;
        } else {
            const size_t rest = buf.size() - std::min(buf.size(), pos);
            if (n > rest / 2 + 1) {
                std::ostringstream s;
                s << "truncated: " << what << " declares " << n << " values, but only " << rest
                  << " bytes follow";
                fail(path, s.str());
            }
            out.resize(n);
            std::string t;
            for (size_t i = 0; i < n; ++i) {
                if (!token(t)) {
                    std::ostringstream s;
                    s << "truncated: " << what << " has " << i << " of " << n << " values";
                    fail(path, s.str());
                }
                char* end = nullptr;
                out[i] = std::strtod(t.c_str(), &end);
                if (*end != '\0') {
                    // A keyword where a number should be: the declared count is too large.
                    std::ostringstream s;
                    s << what << ": expected " << n << " values, found '" << t << "' after " << i;
                    fail(path, s.str());
                }
            }
        }
    }
};

Scalar vtkType(const std::string& path, const std::string& t) {
    static const std::pair<const char*, Scalar> map[] = {
        {"float", Scalar::F32},        {"double", Scalar::F64},       {"int", Scalar::I32},
        {"unsigned_int", Scalar::U32}, {"short", Scalar::I16},        {"unsigned_short", Scalar::U16},
        {"char", Scalar::I8},          {"unsigned_char", Scalar::U8}, {"vtktypeint32", Scalar::I32},
        {"vtkIdType", Scalar::I32},    {"long", Scalar::Invalid}};
    for (const auto& [name, s] : map)
        if (t == name && s != Scalar::Invalid)
            return s;
    fail(path, "unsupported VTK data type '" + t + "'");
}

/// Reads the header lines and the DATASET line; returns whether the data is BINARY.
bool readVtkHeader(const std::string& path, VtkCursor& c) {
    const std::string header = c.line();
    if (header.rfind("# vtk DataFile", 0) != 0)
        fail(path, "not a legacy VTK file");
    c.line(); // title
    std::string mode = c.line();
    while (!mode.empty() && std::isspace(static_cast<unsigned char>(mode.back())))
        mode.pop_back();
    const bool binary = mode == "BINARY";
    if (!binary && mode != "ASCII")
        fail(path, "VTK mode must be ASCII or BINARY, got '" + mode + "'");
    std::string kw = c.expectToken("DATASET");
    if (kw != "DATASET")
        fail(path, "expected DATASET, got '" + kw + "'");
    const std::string dataset = c.expectToken("dataset type");
    if (dataset != "POLYDATA" && dataset != "UNSTRUCTURED_GRID")
        fail(path, "VTK dataset " + dataset + " is not supported (POLYDATA or UNSTRUCTURED_GRID)");
    return binary;
}

/// What the VTK sections have read so far.
struct VtkState {
    VtkState(VtkCursor& cursor, bool isBinary) : c(cursor), binary(isBinary) {}
    VtkCursor& c;
    bool binary;
    ParticleData data;
    std::vector<double> v;
    bool havePoints = false;
    size_t n = 0;
};

void readVtkPoints(VtkState& st) {
    // Arrays are sized by the point count: a second POINTS section would leave them stale.
    if (st.havePoints)
        fail(st.c.path, "VTK file has a second POINTS section");
    st.n = st.c.count("point count");
    const Scalar type = vtkType(st.c.path, st.c.expectToken("point type"));
    st.c.numbers(checkedProduct(st.c.path, 3, st.n, "POINTS"), type, st.binary, st.v, "POINTS");
    st.data.positions.resize(st.n);
    for (size_t i = 0; i < st.n; ++i)
        st.data.positions[i] = Vec3f(float(st.v[3 * i]), float(st.v[3 * i + 1]), float(st.v[3 * i + 2]));
    st.havePoints = true;
}

/// Keeps a point array just read into st.v: 3 components named like a velocity, or 1 float component.
void keepVtkPointArray(VtkState& st, const std::string& name, size_t comps, Scalar type) {
    if (comps == 3 && (name == "velocity" || name == "velocities" || name == "v" || name == "vel")) {
        st.data.velocities.resize(st.n);
        for (size_t i = 0; i < st.n; ++i)
            st.data.velocities[i] = Vec3f(float(st.v[3 * i]), float(st.v[3 * i + 1]), float(st.v[3 * i + 2]));
    } else if (comps == 1 && floatLike(type)) {
        if (st.data.scalars.count(name))
            fail(st.c.path, "point data array '" + name + "' is given twice");
        auto& s = st.data.scalars[name];
        s.resize(st.n);
        for (size_t i = 0; i < st.n; ++i)
            s[i] = float(st.v[i]);
    }
}

/// After "SCALARS name type": the optional component count, then LOOKUP_TABLE and its name.
size_t readVtkScalarsComponents(VtkCursor& c, const std::string& name) {
    size_t comps = 1;
    const size_t save = c.pos;
    std::string next = c.expectToken("LOOKUP_TABLE");
    if (next != "LOOKUP_TABLE") {
        char* end = nullptr;
        const long k = std::strtol(next.c_str(), &end, 10);
        if (*end != '\0' || k < 1 || k > 4) // VTK allows 1 to 4 components
            fail(c.path, "SCALARS " + name + ": bad component count '" + next + "' (1 to 4)");
        comps = size_t(k);
        next = c.expectToken("LOOKUP_TABLE");
    }
    if (next != "LOOKUP_TABLE") {
        c.pos = save;
        fail(c.path, "SCALARS " + name + " lacks LOOKUP_TABLE");
    }
    c.expectToken("lookup table name");
    return comps;
}

/// A SCALARS or VECTORS section (keyword t).
void readVtkPointData(VtkState& st, const std::string& t) {
    const std::string name = st.c.expectToken("array name");
    if (!st.havePoints)
        fail(st.c.path, t + " " + name + " before POINTS (point data needs the point count)");
    const Scalar type = vtkType(st.c.path, st.c.expectToken("array type"));
    size_t comps = t == "VECTORS" ? 3 : 1;
    if (t == "SCALARS")
        comps = readVtkScalarsComponents(st.c, name);
    st.c.numbers(checkedProduct(st.c.path, comps, st.n, name.c_str()), type, st.binary, st.v, name.c_str());
    keepVtkPointArray(st, name, comps, type);
}

void readVtkField(VtkState& st) {
    st.c.expectToken("field name");
    const size_t arrays = st.c.count("array count");
    for (size_t a = 0; a < arrays; ++a) {
        const std::string name = st.c.expectToken("array name");
        const size_t comps = st.c.count("components"), tuples = st.c.count("tuples");
        const Scalar type = vtkType(st.c.path, st.c.expectToken("array type"));
        st.c.numbers(checkedProduct(st.c.path, comps, tuples, name.c_str()), type, st.binary, st.v,
                     name.c_str());
        if (!st.havePoints || tuples != st.n) // e.g. dataset-level FieldData (TIME) before POINTS
            continue;
        keepVtkPointArray(st, name, comps, type);
    }
}

/// Reads the section that keyword t opens; returns false at trailing METADATA.
bool readVtkSection(VtkState& st, const std::string& t) {
    VtkCursor& c = st.c;
    if (t == "POINTS") {
        readVtkPoints(st);
    } else if (t == "VERTICES" || t == "CELLS" || t == "LINES" || t == "POLYGONS") {
        c.count("cell count");
        const size_t size = c.count("cell list size");
        c.numbers(size, Scalar::I32, st.binary, st.v, t.c_str());
    } else if (t == "CELL_TYPES") {
        const size_t m = c.count("cell type count");
        c.numbers(m, Scalar::I32, st.binary, st.v, "CELL_TYPES");
    } else if (t == "POINT_DATA") {
        const size_t m = c.count("POINT_DATA count");
        if (st.havePoints && m != st.n) {
            std::ostringstream s;
            s << "POINT_DATA has " << m << " values for " << st.n << " points";
            fail(c.path, s.str());
        }
    } else if (t == "SCALARS" || t == "VECTORS") {
        readVtkPointData(st, t);
    } else if (t == "FIELD") {
        readVtkField(st);
    } else if (t == "METADATA") {
        return false; // trailing metadata: nothing we use
    } else {
        fail(c.path, "unexpected VTK keyword '" + t + "'");
    }
    return true;
}

ParticleData readVtk(const std::string& path, const std::string& buf) {
    VtkCursor c{path, buf};
    const bool binary = readVtkHeader(path, c);
    VtkState st(c, binary);
    std::string t;
    while (c.token(t))
        if (!readVtkSection(st, t))
            break;
    if (!st.havePoints)
        fail(path, "VTK file has no POINTS section");
    checkPositions(path, st.data);
    return std::move(st.data);
}

} // namespace

ParticleData readParticles(const std::string& path) {
    return parseParticles(readAll(path), path);
}

ParticleData parseParticles(const std::string& buf, const std::string& path) {
    if (buf.empty())
        fail(path, "empty file");
    if (buf.rfind("ply", 0) == 0 && (buf.size() == 3 || buf[3] == '\n' || buf[3] == '\r'))
        return readPly(path, buf);
    if (buf.rfind("# vtk DataFile", 0) == 0)
        return readVtk(path, buf);
    if (looksLikeBgeo(buf)) // partio / Houdini BGEO, gzip-compressed or not (io/BgeoReader.h)
        return parseBgeo(buf, path);
    fail(path, "unknown particle file format (expected a PLY or legacy VTK file)");
}

void writeParticlesPly(const std::string& path, const ParticleData& data) {
    const size_t n = data.positions.size();
    const bool vel = data.velocities.size() == n && n > 0;
    for (const auto& [name, values] : data.scalars)
        if (values.size() != n)
            throw std::runtime_error(path + ": scalar '" + name + "' has the wrong length");
    PlyElementSpec vertex{"vertex", n, {"float x", "float y", "float z"}};
    if (vel)
        vertex.properties.insert(vertex.properties.end(), {"float vx", "float vy", "float vz"});
    for (const auto& [name, values] : data.scalars)
        vertex.properties.push_back("float " + name);
    BinaryPlyWriter w(path, "written by octofluid", {vertex});
    for (size_t i = 0; i < n; ++i) {
        for (int a = 0; a < 3; ++a)
            w.putFloat(data.positions[i][a]);
        if (vel)
            for (int a = 0; a < 3; ++a)
                w.putFloat(data.velocities[i][a]);
        for (const auto& [name, values] : data.scalars)
            w.putFloat(values[i]);
        w.endRecord();
    }
    w.finish();
}

} // namespace octo
