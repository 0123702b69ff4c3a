// Legacy VTK particle files (ascii and binary POLYDATA / UNSTRUCTURED_GRID points with point data).
#include "io/VtkParticleReader.h"
#include "io/ParticleDecode.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace octo::particle_io {

namespace {
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

} // namespace

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

} // namespace octo::particle_io
