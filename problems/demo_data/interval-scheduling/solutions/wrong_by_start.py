import sys

# Bug: greedy by earliest start instead of earliest end.
data = sys.stdin.read().split()
n = int(data[0])
segs = sorted((int(data[1 + 2 * i]), int(data[2 + 2 * i])) for i in range(n))
count, last = 0, 0
for l, r in segs:
    if l > last:
        count += 1
        last = r
print(count)
