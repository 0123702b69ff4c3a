#include "io/ObjReader.h"

#include "io/FileRead.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace octo {
namespace {

std::string where(const std::string& source, size_t line) {
    return source + ":" + std::to_string(line) + ": ";
}

std::string_view trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

/// Splits on blanks.
void tokens(std::string_view s, std::vector<std::string_view>& out) {
    out.clear();
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
            ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t')
            ++j;
        if (j > i)
            out.push_back(s.substr(i, j - i));
        i = j;
    }
}

float parseFloat(std::string_view t, const std::string& src, size_t line) {
    if (!t.empty() && t[0] == '+')
        t.remove_prefix(1);
    float v = 0.0f;
    const char* end = t.data() + t.size();
    auto [p, ec] = std::from_chars(t.data(), end, v);
    if (ec != std::errc() || p != end || !std::isfinite(v))
        throw FileFormatError(where(src, line) + "bad vertex coordinate '" + std::string(t) + "'");
    return v;
}

} // namespace

TriangleMesh parseObj(std::istream& in, const std::string& src) {
    TriangleMesh mesh;
    std::string lineText;
    std::vector<std::string_view> tok;
    std::vector<uint32_t> poly;
    size_t lineNo = 0;
    uint64_t bytes = 0; // read so far
    while (std::getline(in, lineText)) {
        ++lineNo;
        bytes += lineText.size() + 1;
        std::string_view line = trim(lineText);
        if (const auto hash = line.find('#'); hash != std::string_view::npos)
            line = trim(line.substr(0, hash));
        if (line.empty())
            continue;
        tokens(line, tok);
        const std::string_view kw = tok[0];
        if (kw == "v") {
            // "v x y z [w]" or "v x y z r g b" (colour extension): the first three count.
            if (tok.size() < 4)
                throw FileFormatError(where(src, lineNo) + "vertex needs 3 coordinates, got " +
                                      std::to_string(tok.size() - 1));
            mesh.vertices.emplace_back(parseFloat(tok[1], src, lineNo), parseFloat(tok[2], src, lineNo),
                                       parseFloat(tok[3], src, lineNo));
        } else if (kw == "f") {
            if (tok.size() < 4)
                throw FileFormatError(where(src, lineNo) + "face needs at least 3 vertices, got " +
                                      std::to_string(tok.size() - 1));
            poly.clear();
            for (size_t k = 1; k < tok.size(); ++k) {
                std::string_view ref = tok[k];
                ref = ref.substr(0, ref.find('/')); // v, v/t, v//n, v/t/n: the vertex index comes first
                long idx = 0;
                auto [p, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), idx);
                if (ref.empty() || ec != std::errc() || p != ref.data() + ref.size() || idx == 0)
                    throw FileFormatError(where(src, lineNo) + "bad face index '" + std::string(tok[k]) +
                                          "'");
                const long n = long(mesh.vertices.size());
                const long resolved = idx > 0 ? idx - 1 : n + idx; // negative: relative to the latest vertex
                if (resolved < 0 || resolved >= n)
                    throw FileFormatError(where(src, lineNo) + "face index " + std::to_string(idx) +
                                          " refers to a missing vertex (" + std::to_string(n) +
                                          " vertices defined so far)");
                poly.push_back(uint32_t(resolved));
            }
            // Fan triangulation. Every triangle must be paid for by kObjBytesPerTriangle bytes of the
            // text read so far, so triangles take at most twice the file's memory (issue 30: the
            // line "f 1 2 3 2 3 ..." made a triangle per 2 bytes, 3.3 GB from a 150 MB file).
            const uint64_t total = uint64_t(mesh.triangles.size()) + (poly.size() - 2);
            if (total > bytes / kObjBytesPerTriangle + 1) {
                std::ostringstream m;
                m << where(src, lineNo) << "face of " << poly.size() << " vertices brings the mesh to "
                  << total << " triangles from " << bytes << " bytes (limit: one triangle per "
                  << kObjBytesPerTriangle << " bytes of the file)";
                throw FileFormatError(m.str());
            }
            for (size_t k = 1; k + 1 < poly.size(); ++k)
                mesh.triangles.push_back({poly[0], poly[k], poly[k + 1]});
        }
        // vt, vn, g, o, s, usemtl, mtllib, l, p ...: not needed for a rigid shape.
    }
    if (in.bad())
        throw FileFormatError(src + ": read error");
    if (mesh.vertices.empty() && mesh.triangles.empty())
        throw FileFormatError(src + ": empty OBJ (no vertices, no faces)");
    if (mesh.triangles.empty())
        throw FileFormatError(src + ": no faces ('f' records) among " + std::to_string(mesh.vertices.size()) +
                              " vertices");
    return mesh;
}

TriangleMesh readObj(const std::string& path) {
    // Meshes of bodies and fluid shapes; the bound keeps /dev/zero or a huge file from being read.
    std::istringstream in(readRegularFile(path, kMaxObjFileBytes, "OBJ file"));
    return parseObj(in, path);
}

} // namespace octo
