// libFuzzer target for the OBJ reader (body and fluid meshes). Only FileFormatError may escape.
#include "io/ObjReader.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    try {
        const octo::TriangleMesh m = octo::parseObj(in, "fuzz.obj");
        for (const auto& t : m.triangles)
            for (uint32_t i : t)
                if (i >= m.vertices.size())
                    __builtin_trap();
    } catch (const octo::FileFormatError&) {
    }
    return 0;
}
