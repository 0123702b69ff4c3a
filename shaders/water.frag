#version 330 core
// Water surface: Schlick Fresnel mixes the reflected environment (sky) with what lies behind
// the water, refracted in screen space (a copy of the opaque scene: floor, bodies, walls, offset
// along the surface normal by the water's thickness) and absorbed per colour channel by
// Beer–Lambert over the screen-space thickness (red first, blue last), plus in-scattered depth
// colour and a specular sun. Thin sheets keep a minimum thickness, so they stay visible.
in vec3 vNormalView;
in vec3 vPosView;

uniform mat3 viewToWorld;    // rotation part of the inverse view matrix
uniform vec3 sunDirView;
uniform sampler2D thickness; // signed-distance sum (thickness.frag)
uniform sampler2D behind;    // the opaque scene behind the water (refraction)
uniform vec2 viewportSize;
uniform vec3 absorption;     // 1/m per channel
uniform vec3 deepColor;      // in-scattered colour of thick water
uniform float minThickness;  // m: thin sheets and jets are never thinner than this
uniform float refraction;    // screen-space offset per metre of water (fraction of the view)

out vec4 fragColor;

vec3 sky(vec3 d);

void main() {
    vec3 n = normalize(vNormalView);
    vec3 v = normalize(-vPosView);
    if (dot(n, v) < 0.0) n = -n;
    float cosT = max(dot(n, v), 0.0);
    // Schlick with F0 = 0.02 (water); a floor of 0.04 keeps the surface's shape readable from above.
    float fresnel = 0.04 + 0.96 * pow(1.0 - cosT, 5.0);
    vec3 r = reflect(-v, n);
    vec3 rw = normalize(viewToWorld * r);
    vec3 reflected = sky(rw);
    vec2 uv = gl_FragCoord.xy / viewportSize;
    float raw = abs(texture(thickness, uv).r);
    float t = max(raw, minThickness);
    // Refraction: bend the view ray by the normal; deeper water shifts what is behind further.
    vec2 offset = -n.xy * min(refraction * t, 0.025);
    vec3 background = texture(behind, clamp(uv + offset, vec2(0.001), vec2(0.999))).rgb;
    vec3 transmittance = exp(-absorption * t);
    float lit = 0.55 + 0.45 * max(dot(n, sunDirView), 0.0);
    vec3 inScatter = deepColor * (1.0 - transmittance) * lit;
    // Thin, fast-moving sheets are aerated: a little white keeps them visible against the floor.
    float sheet = 1.0 - smoothstep(minThickness, 4.0 * minThickness, raw);
    vec3 body = background * transmittance + inScatter + sheet * 0.12 * vec3(0.85, 0.92, 1.0) * lit;
    float sun = pow(max(dot(r, sunDirView), 0.0), 900.0) * 10.0 + pow(max(dot(r, sunDirView), 0.0), 60.0) * 0.35;
    fragColor = vec4(mix(body, reflected, fresnel) + vec3(sun), 1.0);
}
