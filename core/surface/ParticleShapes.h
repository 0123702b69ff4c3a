#pragma once
// Particle sets on the rest lattice for tests, benchmarks and the CLI's synthetic inputs
// (spacing d0 = 2r, lattice points at origin + d0 (i, j, k)).
#include "common/Types.h"

#include <cstdint>
#include <vector>

namespace octo {

/// nx x ny x nz particles starting at origin.
std::vector<Vec3f> latticeBlock(const Vec3f& origin, int nx, int ny, int nz, float spacing);
/// Lattice points (centred at centre) with |x - centre| <= radius.
std::vector<Vec3f> latticeSphere(const Vec3f& centre, float radius, float spacing);
/// Concentric shells at radii radius - spacing (k + 1/2), each sampled with about 4 pi rho^2 /
/// spacing^2 points on a Fibonacci spiral: a ball whose outer boundary is smooth (no lattice
/// terraces), standing for the solid ball of the given radius.
std::vector<Vec3f> shellSphere(const Vec3f& centre, float radius, float spacing);
/// A dam-break-like frame with about n particles: a collapsing column (a lattice wedge whose top
/// slopes down towards +x), a thin tongue running along the floor, and a splash of scattered
/// droplets above it (seeded, deterministic).
std::vector<Vec3f> damBreakFrame(size_t n, float spacing, uint32_t seed = 1);

} // namespace octo
