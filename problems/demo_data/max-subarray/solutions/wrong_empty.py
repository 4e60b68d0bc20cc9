import sys

# Bug: textbook Kadane that resets to 0, i.e. allows the empty range (answer >= 0).
data = sys.stdin.read().split()
n = int(data[0])
best = cur = 0
for x in map(int, data[1:1 + n]):
    cur = max(0, cur + x)
    best = max(best, cur)
print(best)
