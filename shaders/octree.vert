#version 330 core
// Octree node outlines (GL_LINES): the CPU keeps only the shown nodes' edges, each once, so this
// only colours by depth and class and fades far outlines (Shao et al. 2016, Fig. 5c).
layout(location = 0) in vec3 position;
layout(location = 2) in vec2 depthCls; // depth, brightest class on the edge (0 exterior, 1 interior, 2 surface)

uniform mat4 view;
uniform mat4 projection;
uniform int depthLo;        // depths present in the octree: colour ramp end points
uniform vec3 depthColors[32];
uniform bool depthCue;
uniform vec2 cueRange;      // view distance where fading starts / ends

out vec4 vColor;

void main() {
    int depth = int(depthCls.x + 0.5), cls = int(depthCls.y + 0.5);
    vec4 p = view * vec4(position, 1.0);
    float alpha = cls == 2 ? 0.95 : (cls == 1 ? 0.55 : 0.3);
    if (depthCue)
        alpha *= mix(1.0, 0.12, smoothstep(cueRange.x, cueRange.y, length(p.xyz)));
    vColor = vec4(depthColors[clamp(depth - depthLo, 0, 31)], alpha);
    gl_Position = projection * p;
}
