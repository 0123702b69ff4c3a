// Particle file readers (PLY ascii/binary here; legacy VTK in VtkParticleReader.cpp) and the binary
// PLY writer.
#include "io/ParticleIo.h"

#include "io/BgeoReader.h"
#include "io/FileRead.h"
#include "io/ParticleDecode.h"
#include "io/PlyWriter.h"
#include "io/VtkParticleReader.h"

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
using namespace particle_io;

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
} // namespace

ParticleData readParticles(const std::string& path) {
    return parseParticles(particle_io::readAll(path), path);
}

ParticleData parseParticles(const std::string& buf, const std::string& path) {
    if (buf.empty())
        particle_io::fail(path, "empty file");
    if (buf.rfind("ply", 0) == 0 && (buf.size() == 3 || buf[3] == '\n' || buf[3] == '\r'))
        return readPly(path, buf);
    if (buf.rfind("# vtk DataFile", 0) == 0)
        return particle_io::readVtk(path, buf);
    if (looksLikeBgeo(buf)) // partio / Houdini BGEO, gzip-compressed or not (io/BgeoReader.h)
        return parseBgeo(buf, path);
    particle_io::fail(path, "unknown particle file format (expected a PLY or legacy VTK file)");
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
