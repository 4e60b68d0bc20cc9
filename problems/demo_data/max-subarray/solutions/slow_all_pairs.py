import sys

# Tries every left end and extends to the right: O(n^2).
data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
best = a[0]
for l in range(n):
    s = 0
    for r in range(l, n):
        s += a[r]
        if s > best:
            best = s
print(best)
