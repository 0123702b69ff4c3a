#version 330 core
// Octree node outlines, one instance per node: the 12 edges of the unit cube (24 vertices,
// GL_LINES) scaled to the node. The class and depth filter run here, so a filter edit costs no
// upload; depth cueing fades far outlines (Shao et al. 2016, Fig. 5c).
layout(location = 0) in vec3 corner;   // unit-cube corner in {0,1}^3
layout(location = 1) in vec4 minEdge;  // node min (xyz), edge (w), per instance
layout(location = 2) in vec2 depthCls; // depth, class (0 exterior, 1 interior, 2 surface)

uniform mat4 view;
uniform mat4 projection;
uniform int classMask;      // bit c set: class c shown
uniform int minDepth;
uniform int maxDepth;
uniform int depthLo;        // depths present in the octree: colour ramp end points
uniform vec3 depthColors[32];
uniform bool depthCue;
uniform vec2 cueRange;      // view distance where fading starts / ends

out vec4 vColor;

void main() {
    int depth = int(depthCls.x + 0.5), cls = int(depthCls.y + 0.5);
    if ((classMask & (1 << cls)) == 0 || depth < minDepth || depth > maxDepth) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // outside the clip volume: culled
        vColor = vec4(0.0);
        return;
    }
    vec4 p = view * vec4(minEdge.xyz + corner * minEdge.w, 1.0);
    float alpha = cls == 2 ? 0.95 : (cls == 1 ? 0.55 : 0.3);
    if (depthCue)
        alpha *= mix(1.0, 0.12, smoothstep(cueRange.x, cueRange.y, length(p.xyz)));
    vColor = vec4(depthColors[clamp(depth - depthLo, 0, 31)], alpha);
    gl_Position = projection * p;
}
