#version 330 core
// Water surface: Schlick Fresnel mixes a reflected sky with light transmitted through the
// water, absorbed per colour channel by Beer–Lambert over the screen-space thickness, plus a sun
// highlight. Dual-source blending: dst = emitted + dst * transmittance (per channel), so what
// lies behind the water shows through tinted without a copy of the frame.
in vec3 vNormalView;
in vec3 vPosView;

uniform mat3 viewToWorld;    // rotation part of the inverse view matrix
uniform vec3 sunDirView;
uniform vec3 deepColor;      // in-scattered colour of thick water
uniform sampler2D thickness; // signed-distance sum (thickness.frag)
uniform vec2 viewportSize;
uniform vec3 absorption;     // 1/m per channel

layout(location = 0, index = 0) out vec4 emitted;
layout(location = 0, index = 1) out vec4 transmitted;

void main() {
    vec3 n = normalize(vNormalView);
    vec3 v = normalize(-vPosView);
    if (dot(n, v) < 0.0) n = -n;
    float cosT = max(dot(n, v), 0.0);
    // F0 = 0.02 for water; a little more keeps the surface's shape readable from above.
    float m = 1.0 - cosT, m2 = m * m;
    float fresnel = 0.06 + 0.94 * (m2 * m2 * m);
    vec3 r = reflect(-v, n);
    // r and sunDirView are unit vectors in view space: dot(r, sun) is also the cosine the sky sees
    // along the world-space reflection, so all four sun lobes share one log2.
    float sunLog = log2CosSun(dot(r, sunDirView));
    vec3 reflected = skyGradient((viewToWorld * r).y) + sunGlow(sunLog);
    float t = abs(texture(thickness, gl_FragCoord.xy / viewportSize).r);
    vec3 transmittance = exp(-absorption * t);
    float sun = exp2(600.0 * sunLog) * 6.0 + exp2(40.0 * sunLog) * 0.25;
    vec3 inScatter = deepColor * (1.0 - transmittance) * (0.55 + 0.45 * max(dot(n, sunDirView), 0.0));
    float shape = 0.05 * max(dot(n, sunDirView), 0.0); // faint sun-facing sheen: reads the ripples
    emitted = vec4(fresnel * reflected + (1.0 - fresnel) * inScatter + vec3(sun) + shape * vec3(0.85, 0.93, 1.0), 1.0);
    transmitted = vec4((1.0 - fresnel) * transmittance, 1.0);
}
