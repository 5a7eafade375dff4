#!/usr/bin/env python3
"""Independent re-implementation of flynn's documented lifting-matrix generator.

It follows the specification in include/flynn/random.hpp and
include/flynn/lifting_matrix.hpp (SplitMix64, keyed streams, Lemire's bounded integers,
Floyd's subset sampling), written from the documentation rather than the C++ code, and
prints the golden vectors that tests/core/lifting_matrix_test.cpp pins. Run it to regenerate
them; any change of output means the model format's hash_version must change.
"""
M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix64(z):
    z &= M64
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    return z


class SplitMix64:
    def __init__(self, state):
        self.state = state & M64

    @staticmethod
    def keyed(seed, tag, index):
        return SplitMix64(mix64(seed ^ mix64((tag + mix64(index)) & M64)))

    def next(self):
        self.state = (self.state + GOLDEN) & M64
        return mix64(self.state)

    def below(self, bound):
        product = self.next() * bound
        low = product & M64
        if low < bound:
            threshold = ((1 << 64) - bound) % bound
            while low < threshold:
                product = self.next() * bound
                low = product & M64
        return product >> 64


def lifting_row(seed, j, s, columns):
    rng = SplitMix64.keyed(seed, 1, j)  # RngStream::LiftingMatrix = 1
    chosen = []
    for t in range(columns - s, columns):
        r = rng.below(t + 1)
        chosen.append(t if r in chosen else r)
    return sorted(chosen)


if __name__ == "__main__":
    r = SplitMix64(1234567)
    print("splitmix64(1234567):", [r.next() for _ in range(3)])
    k = SplitMix64.keyed(5489, 1, 0)
    print("keyed(5489,1,0):", [k.next() for _ in range(2)])
    b = SplitMix64(42)
    print("below(42, 10) x8:", [b.below(10) for _ in range(8)])
    for (seed, m, s, d) in [(5489, 6, 2, 4), (1, 4, 3, 10), (5489, 3, 82, 784)]:
        print(f"seed={seed} m={m} s={s} d={d}:")
        for j in range(m):
            print("  ", lifting_row(seed, j, s, d))
    print("seed=7 m=100000 s=5 d=50 row 99999:", lifting_row(7, 99999, 5, 50))
