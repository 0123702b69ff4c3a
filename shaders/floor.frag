#version 330 core
// Sunlit tiles with a soft darkening under the water (column density of the fluid particles,
// blurred on the CPU): light absorbed on its way down, no caustics. Fades into the sky far out.
in vec3 vWorld;
uniform vec3 center;
uniform float extent;
uniform float tile;        // tile edge (m)
uniform vec2 domainMinXZ;
uniform vec2 domainMaxXZ;
uniform sampler2D shadow;  // 0..1 column density over the domain footprint
uniform float shadowStrength; // 1 under a drawn water surface, 0 without one (no dark puddle)
out vec4 fragColor;

const vec3 kSunDirWorld = normalize(vec3(0.45, 0.75, 0.5));

void main() {
    vec2 t = floor(vWorld.xz / tile);
    float checker = mod(t.x + t.y, 2.0);
    vec3 base = mix(vec3(0.80, 0.78, 0.72), vec3(0.70, 0.69, 0.64), checker);
    vec2 uv = (vWorld.xz - domainMinXZ) / (domainMaxXZ - domainMinXZ);
    float inside = step(0.0, uv.x) * step(uv.x, 1.0) * step(0.0, uv.y) * step(uv.y, 1.0);
    float column = shadowStrength * inside * texture(shadow, clamp(uv, 0.0, 1.0)).r;
    vec3 lit = base * (0.55 + 0.45 * kSunDirWorld.y) * mix(vec3(1.0), vec3(0.35, 0.55, 0.65), column);
    // Fade far tiles into the sky's horizon colour (a constant: software GL pays per pow()).
    float r = length(vWorld.xz - center.xz) / extent;
    fragColor = vec4(mix(lit, vec3(0.52, 0.58, 0.65), smoothstep(0.45, 1.0, r)), 1.0);
}
