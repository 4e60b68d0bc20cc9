import sys

# Bug: looks the complement up in a map of ALL values, so a coin worth x/2 can
# be paired with itself.
data = sys.stdin.read().split()
n, x = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
where = {}
for i, v in enumerate(a):
    where[v] = i
for i, v in enumerate(a):
    j = where.get(x - v)
    if j is not None:
        print(min(i, j) + 1, max(i, j) + 1)
        break
else:
    print(-1)
