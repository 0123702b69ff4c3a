// libFuzzer target for the scene reader: JSON text -> SceneDescription (with its bodies and
// parameters). Only SceneError may escape parseSceneJson; anything else is a finding.
#include "scene/Scene.h"
#include "scene/SceneBodies.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const octo::SceneDescription s = octo::parseSceneJson(text, "fuzz.json");
        (void)octo::parseBodiesJson(s.bodiesJson, s.sourcePath);
    } catch (const octo::SceneError&) {
    }
    return 0;
}
