import sys

# dp over requests sorted by end with a linear scan for the previous one: O(n^2).
data = sys.stdin.read().split()
n = int(data[0])
segs = sorted((int(data[2 + 2 * i]), int(data[1 + 2 * i])) for i in range(n))
best = [0] * n
for i in range(n):
    r, l = segs[i]
    b = 1
    for j in range(i):
        if segs[j][0] < l and best[j] + 1 > b:
            b = best[j] + 1
    best[i] = b
print(max(best))
