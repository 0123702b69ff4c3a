#version 330 core
// A tiled floor quad under the container (corners in [-1, 1]^2 scaled to `extent`).
layout(location = 0) in vec2 corner;
uniform mat4 view;
uniform mat4 projection;
uniform vec3 center;  // floor centre (world), y = floor height
uniform float extent; // half edge of the quad
out vec3 vWorld;
void main() {
    vWorld = center + vec3(corner.x * extent, 0.0, corner.y * extent);
    gl_Position = projection * view * vec4(vWorld, 1.0);
}
