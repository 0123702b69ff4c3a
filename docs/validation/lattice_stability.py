# Linear stability of a particle lattice under a uniform SPH pressure p0 (numpy; issue 9, the
# resting column's noise). The symmetric pressure force a_i = -m sum_j (p_i/rho_i^2 + p_j/rho_j^2)
# grad W_ij at uniform p0 is the force of the pair potential U = (2 p0 m / rho^2) W(r). A displacement
# wave u e^{i k.x} feels the stiffness D(k) = sum_r (1 - cos k.r) Hess W(r); a negative eigenvalue of
# D is a mode that grows at sqrt(2 p0 |lambda| / (rho d0^2)) (lambda in units of d0 = 1). The PCISPH
# pressure cannot hold the simple cubic lattice's: k = (pi, 0, pi) / d0 has sin(k.r) = 0 for every
# lattice vector, so to first order the mode changes no particle's density.
# usage: python3 lattice_stability.py [p0_Pa] [d0_m]      (defaults: 3430 Pa = 0.35 m of water, 12.5 mm)
import itertools
import sys

import numpy as np


def cubic_spline(h):
    c = 8 / (np.pi * h**3)
    def w(r):
        q = r / h
        return c * (6 * (q**3 - q * q) + 1) if q <= 0.5 else (c * 2 * (1 - q) ** 3 if q < 1 else 0.0)
    def dw(r):
        q = r / h
        return c * 6 * (3 * q * q - 2 * q) / h if q <= 0.5 else (-c * 6 * (1 - q) ** 2 / h if q < 1 else 0.0)
    def ddw(r):
        q = r / h
        return c * 6 * (6 * q - 2) / h**2 if q <= 0.5 else (c * 12 * (1 - q) / h**2 if q < 1 else 0.0)
    return w, dw, ddw


def wendland_c2(h):
    c = 21 / (2 * np.pi * h**3)
    w = lambda r: c * (1 - r / h) ** 4 * (1 + 4 * r / h) if r < h else 0.0
    dw = lambda r: -20 * c * (r / h) * (1 - r / h) ** 3 / h if r < h else 0.0
    ddw = lambda r: c * (-20 * (1 - r / h) ** 3 + 60 * (r / h) * (1 - r / h) ** 2) / h**2 if r < h else 0.0
    return w, dw, ddw


# Lattices of number density 1 (d0 = 1): cube edge a and basis.
LATTICES = {
    "sc": (1.0, [(0, 0, 0)]),
    "bcc": (2 ** (1 / 3), [(0, 0, 0), (0.5, 0.5, 0.5)]),
    "fcc": (4 ** (1 / 3), [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]),
}


def neighbours(lattice, h):
    a, basis = LATTICES[lattice]
    n = int(h / a) + 2
    pts = [a * (np.array(ijk) + np.array(b)) for ijk in itertools.product(range(-n, n + 1), repeat=3) for b in basis]
    return np.array([p for p in pts if 0 < np.linalg.norm(p) < h]), a


def min_stiffness(kernel, h, lattice, samples=21):
    w, dw, ddw = kernel(h)
    r, a = neighbours(lattice, h)
    hess = []
    for v in r:
        d = np.linalg.norm(v)
        u = np.outer(v, v) / d**2
        hess.append(ddw(d) * u + dw(d) / d * (np.eye(3) - u))
    hess = np.array(hess)
    density = w(0.0) + sum(w(np.linalg.norm(v)) for v in r)
    worst, worst_k = np.inf, None
    ks = np.linspace(0, 2 * np.pi / a, samples)
    for k in itertools.product(ks, repeat=3):
        k = np.array(k)
        lam = np.linalg.eigvalsh(np.einsum("n,nij->ij", 1 - np.cos(r @ k), hess))[0]
        if lam < worst:
            worst, worst_k = lam, k * a / np.pi
    return density, worst, worst_k


def main():
    p0 = float(sys.argv[1]) if len(sys.argv) > 1 else 1000 * 9.81 * 0.35
    d0 = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0125
    rho = 1000.0
    print(f"p0 = {p0:.0f} Pa, d0 = {d0 * 1000:.2f} mm, support h = 2 d0")
    print("kernel     lattice  sum W d0^3  min eig D   k a/pi        growth 1/s")
    for name, kernel in (("cubic", cubic_spline), ("wendland", wendland_c2)):
        for lattice in LATTICES:
            density, lam, k = min_stiffness(kernel, 2.0, lattice)
            growth = np.sqrt(2 * p0 * max(0.0, -lam) / (rho * d0**2))
            print(f"{name:10s} {lattice:8s} {density:10.4f}  {lam:+9.4f}   {np.round(k, 2)}  {growth:8.1f}")


if __name__ == "__main__":
    main()
