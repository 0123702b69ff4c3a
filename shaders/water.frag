#version 330 core
// Water surface: Schlick Fresnel mixes a reflected sky with light transmitted through the
// water, absorbed per colour channel by Beer–Lambert over the screen-space thickness, plus a sun
// highlight. Dual-source blending: dst = emitted + dst * transmittance (per channel), so what
// lies behind the water shows through tinted without a copy of the frame.
in vec3 vNormalView;
in vec3 vPosView;

uniform mat3 viewToWorld;    // rotation part of the inverse view matrix
uniform vec3 sunDirView;
uniform sampler2D thickness; // signed-distance sum (thickness.frag)
uniform vec2 viewportSize;
uniform vec3 absorption;     // 1/m per channel
uniform vec3 deepColor;      // in-scattered colour of thick water

layout(location = 0, index = 0) out vec4 emitted;
layout(location = 0, index = 1) out vec4 transmitted;

vec3 sky(vec3 d);

void main() {
    vec3 n = normalize(vNormalView);
    vec3 v = normalize(-vPosView);
    if (dot(n, v) < 0.0) n = -n;
    float cosT = max(dot(n, v), 0.0);
    // F0 = 0.02 for water; a little more keeps the surface's shape readable from above.
    float fresnel = 0.06 + 0.94 * pow(1.0 - cosT, 5.0);
    vec3 r = reflect(-v, n);
    vec3 reflected = sky(normalize(viewToWorld * r));
    float t = abs(texture(thickness, gl_FragCoord.xy / viewportSize).r);
    vec3 transmittance = exp(-absorption * t);
    float sun = pow(max(dot(r, sunDirView), 0.0), 600.0) * 6.0 + pow(max(dot(r, sunDirView), 0.0), 40.0) * 0.25;
    vec3 inScatter = deepColor * (1.0 - transmittance) * (0.55 + 0.45 * max(dot(n, sunDirView), 0.0));
    float shape = 0.05 * max(dot(n, sunDirView), 0.0); // faint sun-facing sheen: reads the ripples
    emitted = vec4(fresnel * reflected + (1.0 - fresnel) * inScatter + vec3(sun) + shape * vec3(0.85, 0.93, 1.0), 1.0);
    transmitted = vec4((1.0 - fresnel) * transmittance, 1.0);
}
