import sys

# Checks every pair: O(n^2) when no pair exists.
data = sys.stdin.read().split()
n, x = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
for i in range(n):
    need = x - a[i]
    for j in range(i + 1, n):
        if a[j] == need:
            print(i + 1, j + 1)
            sys.exit(0)
print(-1)
