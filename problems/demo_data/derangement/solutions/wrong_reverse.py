import sys

# Bug: reverses the order; for odd n the middle guest keeps their own gift,
# and n = 1 prints "1" instead of -1.
data = sys.stdin.read().split()
t = int(data[0])
for k in range(1, t + 1):
    n = int(data[k])
    print(" ".join(map(str, range(n, 0, -1))))
