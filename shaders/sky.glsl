// Procedural sky shared by the background and the water's reflection: zenith-to-horizon
// gradient, a warm sun with a glow, darker ground below the horizon. Software GL (llvmpipe) pays
// per transcendental call, so each sun lobe is exp2(n log2 s) from one shared log2.
const vec3 kSunDirWorld = normalize(vec3(0.45, 0.75, 0.5));

vec3 skyGradient(float h) {
    vec3 zenith = vec3(0.16, 0.36, 0.74), horizon = vec3(0.72, 0.82, 0.93), ground = vec3(0.30, 0.31, 0.33);
    return h > 0.0 ? mix(horizon, zenith, pow(h, 0.4)) : mix(horizon * 0.8, ground, sqrt(-h));
}

// The sun's disc and glow seen along a direction at log2 of cos(angle to the sun).
vec3 sunGlow(float log2CosSun) {
    return vec3(1.0, 0.9, 0.7) * (exp2(800.0 * log2CosSun) * 8.0 + exp2(12.0 * log2CosSun) * 0.25);
}

// log2 of cos(angle to the sun), -inf-safe: directions facing away get a large negative value.
float log2CosSun(float cosSun) {
    return log2(max(cosSun, 1e-8));
}

vec3 sky(vec3 d) {
    return skyGradient(d.y) + sunGlow(log2CosSun(dot(d, kSunDirWorld)));
}
