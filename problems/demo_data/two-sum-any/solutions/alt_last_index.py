import sys

# Correct alternative: hash map from value to its LAST index, scanning from the right.
data = sys.stdin.read().split()
n, x = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
seen = {}
for i in range(n - 1, -1, -1):
    j = seen.get(x - a[i])
    if j is not None:
        print(i + 1, j + 1)
        break
    seen.setdefault(a[i], i)
else:
    print(-1)
