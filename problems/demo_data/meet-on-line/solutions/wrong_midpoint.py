import sys

# Bug: always meets in the middle of the two extreme friends, ignoring speeds.
data = sys.stdin.read().split()
n = int(data[0])
x = list(map(int, data[1:1 + n]))
v = list(map(int, data[1 + n:1 + 2 * n]))
p = (min(x) + max(x)) / 2
print("%.9f" % max(abs(a - p) / b for a, b in zip(x, v)))
