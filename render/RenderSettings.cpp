#include "render/RenderSettings.h"

#include <sstream>

namespace octo::render {

std::vector<std::string> applyOverlayList(RenderSettings& s, const std::string& commaList) {
    s.showParticles = s.highlightSurface = s.showMesh = false;
    s.octreeSurface = s.octreeInterior = s.octreeExterior = false;
    std::vector<std::string> unknown;
    std::stringstream in(commaList);
    std::string name;
    while (std::getline(in, name, ',')) {
        if (name.empty())
            continue;
        if (name == "particles")
            s.showParticles = true;
        else if (name == "surface-particles")
            s.highlightSurface = true; // with "particles" too: highlighted among all
        else if (name == "diagnostic")
            s.shading = Shading::Diagnostic;
        else if (name == "mesh")
            s.showMesh = true;
        else if (name == "octree")
            s.octreeSurface = s.octreeInterior = s.octreeExterior = true;
        else if (name == "octree-surface")
            s.octreeSurface = true;
        else if (name == "octree-interior")
            s.octreeInterior = true;
        else if (name == "octree-exterior")
            s.octreeExterior = true;
        else if (name == "bodies")
            s.showBodies = true;
        else if (name == "boundary")
            s.showBoundary = true;
        else if (name == "grid")
            s.showGrid = true;
        else
            unknown.push_back(name);
    }
    return unknown;
}

} // namespace octo::render
