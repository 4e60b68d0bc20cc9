import bisect
import sys

# Correct alternative: dp over requests sorted by end, binary search for the
# last request that ends strictly before the current one starts.
data = sys.stdin.read().split()
n = int(data[0])
segs = sorted((int(data[2 + 2 * i]), int(data[1 + 2 * i])) for i in range(n))
ends = [r for r, _ in segs]
best = [0] * (n + 1)
for i, (r, l) in enumerate(segs):
    k = bisect.bisect_left(ends, l)  # requests 0..k-1 end before l
    best[i + 1] = max(best[i], best[k] + 1)
print(best[n])
