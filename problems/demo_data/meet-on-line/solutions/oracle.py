import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    x = list(map(int, data[1:1 + n]))
    v = list(map(int, data[1 + n:1 + 2 * n]))
    pairs = list(zip(x, v))

    def can(t):
        # Everyone reachable within t: the intervals [x - v t, x + v t] intersect.
        return max(a - b * t for a, b in pairs) <= min(a + b * t for a, b in pairs)

    lo, hi = 0.0, float(max(x) - min(x))
    for _ in range(70):
        mid = (lo + hi) / 2
        if can(mid):
            hi = mid
        else:
            lo = mid
    print("%.12f" % hi)


main()
