#pragma once
// A function of the squared distance s = |x|^2 on [0, range), sampled at n equal steps of s and
// interpolated linearly between them: the inner loops read kernels without a square root, a
// division or a branch per neighbour pair (SPlisHSPlasH tabulates its kernels the same way, over
// |x|). Past the range (and for NaN) it is 0: the table ends in two zero samples, s >= range clamps
// onto them. Used by KernelTable (W, grad W) and SurfaceTension_Akinci2013 (C, A and their
// potentials).
#include "spatial/Lanes.h"

#include <cstddef>
#include <vector>

namespace octo {

class TabulatedFunction {
public:
    /// Samples f(s_i) at s_i = i / (n / range), i = 0 .. n - 1; the function is 0 from s = range on.
    template <class F> void sample(float range, int n, F&& f) {
        reset(range, n);
        for (int i = 0; i < n; ++i)
            values_[size_t(i)] = f(i, sampleAt(i));
    }
    /// n zero samples over [0, range), to be filled with set() (tables built by a recurrence).
    void reset(float range, int n) {
        n_ = n;
        invDs_ = float(n) / range;
        values_.assign(size_t(n) + 2, 0.0f);
    }
    void set(int i, float value) { values_[size_t(i)] = value; }
    float sampleAt(int i) const { return float(i) / invDs_; }
    /// 1 / sample spacing (n / range).
    float inverseSpacing() const { return invDs_; }
    int samples() const { return n_; }
    /// Sample i, 0 <= i < samples() + 2 (the last two are the zeros past the range).
    float value(int i) const { return values_[size_t(i)]; }

    /// Where s falls: the sample below it and the fraction of the step beyond that sample.
    struct Position {
        size_t i;
        float u;
    };
    Position locate(float s) const {
        float u = s * invDs_;
        u = u < float(n_) ? u : float(n_); // beyond the range, or NaN: the zero samples
        const int i = int(u);
        return {size_t(i), u - float(i)};
    }
    /// The value at a position located in this table or in one with the same range and samples
    /// (two functions of the same s read with one locate()).
    float operator()(Position p) const { return values_[p.i] + p.u * (values_[p.i + 1] - values_[p.i]); }
    float operator()(float s) const { return (*this)(locate(s)); }
    /// Four lookups, each bit for bit operator()(float) of its lane (locate and read as above).
    struct Position4 {
        Int4 i;
        Float4 u;
    };
    Position4 locate(Float4 s) const {
        Float4 u = s * broadcast4(invDs_);
        const Float4 top = broadcast4(float(n_));
        u = select4(u < top, u, top); // beyond the range, or NaN: the zero samples
        const Int4 i = __builtin_convertvector(u, Int4);
        return {i, u - __builtin_convertvector(i, Float4)};
    }
    Float4 operator()(const Position4& p) const {
        auto at = [&](int l, int next) { return values_[size_t(p.i[l]) + size_t(next)]; };
        const Float4 below{at(0, 0), at(1, 0), at(2, 0), at(3, 0)},
            above{at(0, 1), at(1, 1), at(2, 1), at(3, 1)};
        return below + p.u * (above - below);
    }
    Float4 operator()(Float4 s) const { return (*this)(locate(s)); }

private:
    int n_ = 0;
    float invDs_ = 1.0f;
    std::vector<float> values_;
};

} // namespace octo
