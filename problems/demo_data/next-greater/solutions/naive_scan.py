import sys

# Scans forward from every position until a greater value shows up.
# On random values the scan stops after a few steps (O(n log n) in expectation),
# but a non-increasing array makes every scan run to the end: quadratic.
data = sys.stdin.read().split()
n = int(data[0])
a = [int(x) for x in data[1:1 + n]]
res = []
for i in range(n):
    ai = a[i]
    ans = -1
    j = i + 1
    while j < n:
        if a[j] > ai:
            ans = j + 1
            break
        j += 1
    res.append(ans)
print(" ".join(map(str, res)))
